//! Rule sets: versioned rules per site (`rule_set` table).
//!
//! A new version is inserted in one transaction after learning succeeded,
//! so the previous version stays current until the new one is complete; a
//! reader sees either the old rules or the new ones, never half.

use serde::Serialize;
use sqlx::Row;
use time::OffsetDateTime;

use super::{Store, StoreError, site_from_db};

/// Inserts `rules` as the next version of site `site_id` inside a
/// transaction and evaluates to that version number.
macro_rules! insert_rules {
    ($tx:ident, $site_id:expr, $rules:expr, $report:expr) => {{
        let rules: &Rules = $rules;
        let latest: Option<i64> =
            sqlx::query("SELECT MAX(version) FROM rule_set WHERE site_id = $1")
                .bind($site_id)
                .fetch_one(&mut *$tx)
                .await?
                .try_get(0)?;
        let version = latest.unwrap_or(0) + 1;
        // UNIQUE (site_id, version) makes a concurrent learn of the same
        // site fail here rather than overwrite.
        sqlx::query(
            "INSERT INTO rule_set (site_id, version, learned_at, pages, content, exclude, \
             template, rules, report) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)",
        )
        .bind($site_id)
        .bind(version)
        .bind(rules.learned_at)
        .bind(rules.pages as i64)
        .bind(rules.content.len() as i64)
        .bind(rules.exclude.len() as i64)
        .bind(rules.template.len() as i64)
        .bind(
            Rules {
                version,
                ..rules.clone()
            }
            .to_json(),
        )
        .bind($report)
        .execute(&mut *$tx)
        .await?;
        version
    }};
}
use crate::rules::Rules;
use crate::site::Site;
pub(super) use insert_rules;

/// One stored version, without its JSON.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RulesVersion {
    /// The site.
    pub site: Site,
    /// Version, from 1.
    pub version: i64,
    /// When it was learned.
    #[serde(with = "time::serde::rfc3339")]
    pub learned_at: OffsetDateTime,
    /// Pages learned from.
    pub pages: i64,
    /// Content selectors.
    pub content: i64,
    /// Exclusion selectors.
    pub exclude: i64,
    /// Template strings.
    pub template: i64,
}

impl Store {
    /// Stores `rules` as the site's next version and returns it (with its
    /// version number set). `report` is kept beside it (JSON).
    pub async fn put_rules(&self, rules: &Rules, report: &str) -> Result<Rules, StoreError> {
        let mut rules = rules.clone();
        let now = OffsetDateTime::now_utc();
        let _writing = self.writing().await;
        on_pool!(self, pool => {
            let mut tx = pool.begin().await?;
            let site_id = site_id!(tx, rules.site.as_str(), now);
            rules.version = insert_rules!(tx, site_id, &rules, report);
            tx.commit().await?;
        });
        Ok(rules)
    }

    /// The current rules of a site (its newest version), if any.
    pub async fn rules(&self, site: &Site) -> Result<Option<Rules>, StoreError> {
        self.rules_version(site, None).await
    }

    /// One version of a site's rules (`None`: the newest).
    pub async fn rules_version(
        &self,
        site: &Site,
        version: Option<i64>,
    ) -> Result<Option<Rules>, StoreError> {
        let Some((json, _)) = self.rule_set_row(site, version).await? else {
            return Ok(None);
        };
        Rules::from_json(&json)
            .map(Some)
            .map_err(|e| StoreError::Corrupt {
                url: site.to_string(),
                reason: format!("rules: {e}"),
            })
    }

    /// The learn report stored with a version (`None`: the newest).
    pub async fn rules_report(
        &self,
        site: &Site,
        version: Option<i64>,
    ) -> Result<Option<String>, StoreError> {
        Ok(self
            .rule_set_row(site, version)
            .await?
            .map(|(_, report)| report))
    }

    /// (rules JSON, report JSON) of one version (`None`: the newest).
    async fn rule_set_row(
        &self,
        site: &Site,
        version: Option<i64>,
    ) -> Result<Option<(String, String)>, StoreError> {
        let row = on_pool!(self, pool => {
            sqlx::query(
                "SELECT r.rules, r.report FROM rule_set r JOIN site s ON s.site_id = r.site_id \
                 WHERE s.name = $1 AND ($2 IS NULL OR r.version = $2) ORDER BY r.version DESC LIMIT 1",
            )
            .bind(site.as_str())
            .bind(version)
            .fetch_optional(pool)
            .await?
            .map(|row| -> Result<(String, String), sqlx::Error> { Ok((row.try_get(0)?, row.try_get(1)?)) })
            .transpose()?
        });
        Ok(row)
    }

    /// All versions of a site's rules, newest first.
    pub async fn rules_history(&self, site: &Site) -> Result<Vec<RulesVersion>, StoreError> {
        let rows = on_pool!(self, pool => {
            sqlx::query(
                "SELECT s.name, r.version, r.learned_at, r.pages, r.content, r.exclude, r.template \
                 FROM rule_set r JOIN site s ON s.site_id = r.site_id WHERE s.name = $1 \
                 ORDER BY r.version DESC",
            )
            .bind(site.as_str())
            .fetch_all(pool)
            .await?
            .iter()
            .map(|row| -> Result<(String, RulesVersionRow), sqlx::Error> {
                Ok((
                    row.try_get(0)?,
                    RulesVersionRow {
                        version: row.try_get(1)?,
                        learned_at: row.try_get(2)?,
                        pages: row.try_get(3)?,
                        content: row.try_get(4)?,
                        exclude: row.try_get(5)?,
                        template: row.try_get(6)?,
                    },
                ))
            })
            .collect::<Result<Vec<_>, _>>()?
        });
        rows.into_iter()
            .map(|(name, r)| {
                Ok(RulesVersion {
                    site: site_from_db(&name)?,
                    version: r.version,
                    learned_at: r.learned_at,
                    pages: r.pages,
                    content: r.content,
                    exclude: r.exclude,
                    template: r.template,
                })
            })
            .collect()
    }
}

struct RulesVersionRow {
    version: i64,
    learned_at: OffsetDateTime,
    pages: i64,
    content: i64,
    exclude: i64,
    template: i64,
}
