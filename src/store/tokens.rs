//! Upload tokens (`api_token` table). The store sees only hashes: making
//! and hashing tokens is [`crate::serve::token`]'s job.

use serde::Serialize;
use sqlx::Row;
use time::OffsetDateTime;

use super::{Store, StoreError};

/// A token's name and age (never the token).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TokenInfo {
    /// The name it was created with.
    pub name: String,
    /// When.
    #[serde(with = "time::serde::rfc3339")]
    pub created_at: OffsetDateTime,
}

impl Store {
    /// Stores a token's hash under `name`. False when the name is taken.
    pub async fn put_token(&self, name: &str, hash: &str) -> Result<bool, StoreError> {
        let now = OffsetDateTime::now_utc();
        let _writing = self.writing().await;
        let inserted = on_pool!(self, pool => {
            sqlx::query(
                "INSERT INTO api_token (name, hash, created_at) VALUES ($1, $2, $3) \
                 ON CONFLICT (name) DO NOTHING",
            )
            .bind(name)
            .bind(hash)
            .bind(now)
            .execute(pool)
            .await?
            .rows_affected()
        });
        Ok(inserted == 1)
    }

    /// The name of the token with this hash, if one exists.
    pub async fn token_name(&self, hash: &str) -> Result<Option<String>, StoreError> {
        let name = on_pool!(self, pool => {
            sqlx::query("SELECT name FROM api_token WHERE hash = $1")
                .bind(hash)
                .fetch_optional(pool)
                .await?
                .map(|row| row.try_get(0))
                .transpose()?
        });
        Ok(name)
    }

    /// All tokens, by name.
    pub async fn tokens(&self) -> Result<Vec<TokenInfo>, StoreError> {
        let tokens = on_pool!(self, pool => {
            sqlx::query("SELECT name, created_at FROM api_token ORDER BY name")
                .fetch_all(pool)
                .await?
                .iter()
                .map(|row| -> Result<TokenInfo, sqlx::Error> {
                    Ok(TokenInfo { name: row.try_get(0)?, created_at: row.try_get(1)? })
                })
                .collect::<Result<Vec<_>, _>>()?
        });
        Ok(tokens)
    }

    /// Deletes the token named `name`. False when there is none.
    pub async fn delete_token(&self, name: &str) -> Result<bool, StoreError> {
        let _writing = self.writing().await;
        let deleted = on_pool!(self, pool => {
            sqlx::query("DELETE FROM api_token WHERE name = $1")
                .bind(name)
                .execute(pool)
                .await?
                .rows_affected()
        });
        Ok(deleted == 1)
    }
}
