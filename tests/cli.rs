//! The `spider` binary as a user runs it: capture, import, sites, pages,
//! exit statuses and messages.

use std::io::Write;
use std::path::Path;
use std::process::{Command, Output, Stdio};

use crate::util::{PgDatabase, chromium, fixtures, temp_sqlite};

fn spider(db: &str, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_spider"))
        .arg("--db")
        .arg(db)
        .args(args)
        .env("SPIDER_CHROMIUM", chromium())
        .env_remove("DATABASE_URL")
        .output()
        .expect("run spider")
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn example(page: &str) -> String {
    fixtures()
        .join("example-site")
        .join(page)
        .display()
        .to_string()
}

#[test]
fn capture_then_list_sites_and_pages() {
    let (_dir, db) = temp_sqlite();
    let pages = ["first-frost.html", "river-survey.html", "night-trains.html"];
    let mut args = vec!["capture", "--site", "example.test"];
    let paths: Vec<String> = pages.iter().map(|p| example(p)).collect();
    args.extend(paths.iter().map(String::as_str));
    let out = spider(&db, &args);
    assert!(out.status.success(), "{}", stderr(&out));
    let err = stderr(&out);
    // Not a terminal: one plain line per page, then a summary.
    assert_eq!(err.matches("ok    file://").count(), 3, "{err}");
    assert!(err.contains("captured 3 of 3 pages"), "{err}");
    assert!(err.contains("3 new, 0 replaced"), "{err}");

    // The same pages again replace the older captures.
    let out = spider(&db, &args);
    assert!(out.status.success());
    assert!(
        stderr(&out).contains("0 new, 3 replaced"),
        "{}",
        stderr(&out)
    );

    let out = spider(&db, &["sites"]);
    assert!(out.status.success());
    let table = stdout(&out);
    let line = table
        .lines()
        .find(|l| l.starts_with("example.test"))
        .expect(&table);
    assert_eq!(line.split_whitespace().nth(1), Some("3"), "{table}");

    let out = spider(&db, &["pages", "example.test", "--json"]);
    assert!(out.status.success());
    let rows: Vec<serde_json::Value> = stdout(&out)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(rows.len(), 3);
    assert!(
        rows.iter()
            .any(|r| r["title"] == "Night trains return to the northern line")
    );
    assert!(rows.iter().all(|r| r["blocks"].as_i64().unwrap() > 10));

    let out = spider(&db, &["pages", "nobody.test"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains("no captures of site nobody.test"));
}

#[test]
fn a_directory_is_captured_and_the_site_comes_from_the_canonical_url() {
    let (_dir, db) = temp_sqlite();
    let out = spider(
        &db,
        &[
            "capture",
            &fixtures().join("example-site").display().to_string(),
        ],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let out = spider(&db, &["sites", "--json"]);
    let sites: Vec<serde_json::Value> = stdout(&out)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(sites.len(), 1);
    assert_eq!(sites[0]["site"], "example.test");
    assert_eq!(sites[0]["pages"], 4);
}

#[test]
fn failed_pages_give_exit_status_1_and_a_summary() {
    let (dir, db) = temp_sqlite();
    let empty = dir.path().join("empty.html");
    std::fs::write(&empty, "").unwrap();
    let out = spider(
        &db,
        &[
            "capture",
            "--site",
            "example.test",
            &example("bread-oven.html"),
            &empty.display().to_string(),
            "/no/such/page.html",
        ],
    );
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(err.contains("captured 1 of 3 pages"), "{err}");
    assert!(err.contains("2 page(s) failed"), "{err}");
    assert!(err.contains("empty file"), "{err}");
    assert!(err.contains("/no/such/page.html"), "{err}");
    // The good page is stored all the same.
    let out = spider(&db, &["pages", "example.test", "--json"]);
    assert_eq!(stdout(&out).lines().count(), 1);
}

#[test]
fn json_output_can_be_imported_elsewhere() {
    let (dir, db) = temp_sqlite();
    let out = spider(
        &db,
        &[
            "capture",
            "--json",
            "--site",
            "example.test",
            &example("first-frost.html"),
            &example("bread-oven.html"),
        ],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let jsonl = stdout(&out);
    assert_eq!(jsonl.lines().count(), 2);
    // --json stores nothing.
    assert!(!Path::new(db.trim_start_matches("sqlite://")).exists());

    // Good lines are stored; bad ones are reported by line number.
    let file = dir.path().join("captures.jsonl");
    let mut f = std::fs::File::create(&file).unwrap();
    let mut lines = jsonl.lines();
    writeln!(f, "{}", lines.next().unwrap()).unwrap();
    writeln!(f, "{{\"schema\":1,\"site\":\"x.com\"}}").unwrap();
    writeln!(f).unwrap();
    writeln!(f, "this is not json").unwrap();
    writeln!(f, "{}", lines.next().unwrap()).unwrap();
    drop(f);
    let out = spider(&db, &["import", &file.display().to_string()]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(
        err.contains("line 2: invalid capture: missing field"),
        "{err}"
    );
    assert!(err.contains("line 4: invalid capture"), "{err}");
    assert!(err.contains("imported 2 capture(s)"), "{err}");
    let out = spider(&db, &["pages", "example.test", "--json"]);
    assert_eq!(stdout(&out).lines().count(), 2);

    // Standard input works too, and re-importing replaces.
    let mut child = Command::new(env!("CARGO_BIN_EXE_spider"))
        .args(["--db", &db, "import", "-"])
        .stdin(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(jsonl.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let out = spider(&db, &["pages", "example.test", "--json"]);
    assert_eq!(stdout(&out).lines().count(), 2);
}

#[tokio::test]
async fn postgres_works_the_same() {
    let pg = PgDatabase::create().await;
    let url = pg.url.clone();
    let out = tokio::task::spawn_blocking(move || {
        spider(
            &url,
            &[
                "capture",
                "--site",
                "example.test",
                &example("night-trains.html"),
                &example("bread-oven.html"),
            ],
        )
    })
    .await
    .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let url = pg.url.clone();
    let out = tokio::task::spawn_blocking(move || spider(&url, &["sites"]))
        .await
        .unwrap();
    assert!(
        stdout(&out)
            .lines()
            .any(|l| l.starts_with("example.test") && l.contains(" 2 ")),
        "{}",
        stdout(&out)
    );
    pg.drop_now().await;
}

#[test]
fn fatal_errors_give_exit_status_2() {
    let out = spider("mysql://x", &["sites"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("unsupported database URL"),
        "{}",
        stderr(&out)
    );

    let (_dir, db) = temp_sqlite();
    let out = Command::new(env!("CARGO_BIN_EXE_spider"))
        .args([
            "--db",
            &db,
            "capture",
            "--chromium",
            "/nonexistent/chromium",
            "x.html",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("Chromium not found at /nonexistent/chromium"),
        "{}",
        stderr(&out)
    );

    let out = spider(&db, &["capture", "--site", "bad site!", "x.html"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("invalid site name"),
        "{}",
        stderr(&out)
    );
}

/// README command 1: the demo captures the bundled example site.
#[test]
fn the_demo_captures_the_example_site() {
    let (_dir, db) = temp_sqlite();
    let out = spider(&db, &["demo"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("captured 4 of 4 pages"),
        "{}",
        stderr(&out)
    );
    assert!(
        stdout(&out).contains("The village bread oven is lit again"),
        "{}",
        stdout(&out)
    );
    let out = spider(&db, &["pages", "example.test", "--json"]);
    let pages: Vec<serde_json::Value> = stdout(&out)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(pages.len(), 4);
    assert!(pages.iter().all(|p| p["blocks"] == 22), "{pages:?}");
    // ...and learns its rules.
    let out = spider(&db, &["rules", "example.test"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let rules = spider::Rules::from_json(&stdout(&out)).unwrap();
    assert_eq!(rules.version, 1);
    assert!(
        rules.content.iter().any(|r| r.selector.contains("p")),
        "{rules:?}"
    );
}

/// `learn --files` (capture, then learn), `learn` from stored captures,
/// `rules`, `rules --history`, `explain`, `extract`.
#[test]
fn learn_rules_and_explain() {
    let (dir, db) = temp_sqlite();
    // `--files` captures the pages first, then learns.
    let site_dir = fixtures().join("news-site").display().to_string();
    let rules_dir = dir.path().join("rules");
    let rules_arg = rules_dir.display().to_string();
    let out = spider(
        &db,
        &[
            "learn",
            "harbour.test",
            "--out",
            &rules_arg,
            "--json",
            "--files",
            &site_dir,
        ],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("captured 6 of 6 pages"),
        "{}",
        stderr(&out)
    );
    let json: serde_json::Value = serde_json::from_str(stdout(&out).trim()).unwrap();
    assert_eq!(json["rules"]["version"], 1);
    assert_eq!(json["report"]["pages"], 6);
    let file = rules_dir.join("harbour.test.json");
    let from_file = spider::Rules::read(&file).unwrap();
    assert_eq!(serde_json::to_value(&from_file).unwrap(), json["rules"]);

    // The human summary, and a second version.
    let out = spider(&db, &["learn", "harbour.test", "--out", &rules_arg]);
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(
        text.contains("learned harbour.test (version 2) from 6 pages"),
        "{text}"
    );
    assert!(text.contains("content    "), "{text}");

    let out = spider(&db, &["rules", "harbour.test"]);
    let current = spider::Rules::from_json(&stdout(&out)).unwrap();
    assert_eq!(current.version, 2);
    let out = spider(&db, &["rules", "harbour.test", "--history", "--json"]);
    let versions: Vec<i64> = stdout(&out)
        .lines()
        .map(|l| {
            serde_json::from_str::<serde_json::Value>(l).unwrap()["version"]
                .as_i64()
                .unwrap()
        })
        .collect();
    assert_eq!(versions, [2, 1]);
    let out = spider(&db, &["rules", "harbour.test", "--version", "1"]);
    assert_eq!(spider::Rules::from_json(&stdout(&out)).unwrap().version, 1);

    let report = dir.path().join("report.html");
    let out = spider(
        &db,
        &[
            "explain",
            "harbour.test",
            "--html",
            &report.display().to_string(),
        ],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(
        text.contains("content") && text.contains("why: top score"),
        "{text}"
    );
    assert!(
        text.contains("div.ad-slot") || text.contains("excluded"),
        "{text}"
    );
    let html = std::fs::read_to_string(&report).unwrap();
    assert!(
        html.contains("<table") && html.contains("class=\"content\""),
        "{html}"
    );

    // Extraction with the learned rules: from the database, and from files.
    let page = fixtures()
        .join("news-site/ferry-strike.html")
        .display()
        .to_string();
    let out = spider(&db, &["extract", &page]);
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(
        text.starts_with("Island ferry crews vote to strike over winter rota\n\n"),
        "{text}"
    );
    assert!(
        text.contains("Crews on the Holm Island ferry have voted"),
        "{text}"
    );
    assert!(
        !text.contains("Advertisement") && !text.contains("Share this story"),
        "{text}"
    );
    let both = fixtures()
        .join("news-site/tide-tables.html")
        .display()
        .to_string();
    let out = spider(
        &db,
        &["extract", "--rules", &rules_arg, "--json", &page, &both],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let records: Vec<serde_json::Value> = stdout(&out)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(records.len(), 2);
    assert_eq!(records[0]["site"], "harbour.test");
    assert_eq!(records[0]["rules_version"], 2);
    assert_eq!(
        records[1]["title"],
        "New tide tables leave anglers puzzled over the spring lows"
    );
    assert!(
        records[0]["matched"]
            .as_array()
            .unwrap()
            .iter()
            .any(|m| m["kind"] == "content" && m["count"].as_u64() > Some(0))
    );
    // A URL is fetched (no browser) and extracted the same way; a failed
    // fetch is a clear error.
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let server = runtime.block_on(crate::util::FixtureServer::start());
    let url = server.url("/site/news-site/ferry-strike.html");
    let out = spider(&db, &["extract", "--rules", &rules_arg, "--json", &url]);
    assert!(out.status.success(), "{}", stderr(&out));
    let record: serde_json::Value = serde_json::from_str(stdout(&out).trim()).unwrap();
    assert_eq!(record["site"], "harbour.test");
    let fetched = record["text"].as_str().unwrap();
    assert!(
        fetched.starts_with("Island ferry crews vote to strike over winter rota\n\n")
            && fetched.contains("Crews on the Holm Island ferry have voted")
            && !fetched.contains("Share this story"),
        "{fetched}"
    );
    assert_eq!(record["url"], "https://harbour.test/news/ferry-strike");
    let missing = server.url("/missing.html");
    let out = spider(&db, &["extract", "--rules", &rules_arg, &missing]);
    assert!(!out.status.success());
    assert!(
        stderr(&out).contains("the server answered 404"),
        "{}",
        stderr(&out)
    );
    drop(server);

    // A page that names no site needs --site.
    let unknown = fixtures().join("pages/tricky.html").display().to_string();
    let out = spider(&db, &["extract", "--rules", &rules_arg, &unknown]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(stderr(&out).contains("give --site"), "{}", stderr(&out));

    // Unknown sites: clear messages.
    let out = spider(&db, &["learn", "nobody.test"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("no captures of site nobody.test"),
        "{}",
        stderr(&out)
    );
    let out = spider(&db, &["rules", "nobody.test"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains("no rules for nobody.test"),
        "{}",
        stderr(&out)
    );
}
