//! `spider eval` on a tiny corpus written here, with figures computed by
//! hand: capture (real Chromium), learn, extract, score.

use std::process::Command;

use crate::util::chromium;

fn page(title: &str, paragraphs: &[&str]) -> String {
    let body: String = paragraphs.iter().map(|p| format!("<p>{p}</p>")).collect();
    format!(
        "<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>{title} | Tiny</title>\
         <meta property=\"og:title\" content=\"{title}\"></head><body>\
         <nav class=\"menu\"><a href=\"/\">Home</a> <a href=\"/about\">About us</a></nav>\
         <main class=\"post\"><h1>{title}</h1><div class=\"body\">{body}</div></main>\
         <footer class=\"foot\"><p>Tiny is written by the harbour crew every week.</p></footer></body></html>"
    )
}

#[test]
fn eval_scores_a_tiny_corpus_as_computed_by_hand() {
    let dir = tempfile::tempdir().unwrap();
    let corpus = dir.path().join("corpus");
    let group = corpus.join("tiny.test");
    std::fs::create_dir_all(&group).unwrap();
    let train = [
        (
            "a",
            "Boats in the bay",
            [
                "The boats came back to the bay at dawn with a good catch of herring and mackerel.",
                "Crews said the sea was calm and the wind light all night long.",
            ],
        ),
        (
            "b",
            "Nets on the quay",
            [
                "Old nets were laid out on the quay to dry in the afternoon sun by the harbour wall.",
                "The net loft will open for visitors on Saturday for the first time this year.",
            ],
        ),
        (
            "c",
            "Gulls over the market",
            [
                "Gulls circled the fish market all morning as traders set out their stalls early.",
                "Stallholders asked visitors not to feed the birds however hungry they look.",
            ],
        ),
    ];
    let mut manifest = String::from("group\tpage\thtml\tgold\tsplit\turl\n");
    for (name, title, paragraphs) in &train {
        std::fs::write(group.join(format!("{name}.html")), page(title, paragraphs)).unwrap();
        std::fs::write(
            group.join(format!("{name}.txt")),
            "not read for training pages",
        )
        .unwrap();
        manifest.push_str(&format!("tiny.test\t{name}\ttiny.test/{name}.html\ttiny.test/{name}.txt\ttrain\thttp://tiny.test/{name}\n"));
    }
    // The test page: a title and two paragraphs of ten words each.
    let ten = "one two three four five six seven eight nine ten";
    std::fs::write(group.join("d.html"), page("Quiet harbour", &[ten, ten])).unwrap();
    // Gold: the title and one paragraph. Output 22 tokens, gold 12, overlap
    // 12: P = 12/22, R = 1, F1 = 24/34; the word sequences match in one
    // block of 12: 2·12/(22+12) = 24/34 too.
    std::fs::write(group.join("d.txt"), format!("Quiet harbour\n\n{ten}\n")).unwrap();
    manifest
        .push_str("tiny.test\td\ttiny.test/d.html\ttiny.test/d.txt\ttest\thttp://tiny.test/d\n");
    std::fs::write(corpus.join("manifest.tsv"), manifest).unwrap();

    let out_dir = dir.path().join("out");
    let json = dir.path().join("scores.json");
    let out = Command::new(env!("CARGO_BIN_EXE_spider"))
        .args(["eval", "--corpus"])
        .arg(&corpus)
        .arg("--out")
        .arg(&out_dir)
        .arg("--json")
        .arg(&json)
        .arg("--chromium")
        .arg(chromium())
        .env_remove("DATABASE_URL")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stdout}\n{stderr}");

    let text = std::fs::read_to_string(out_dir.join("tiny.test/d.txt")).unwrap();
    assert_eq!(
        text,
        format!("Quiet harbour\n\n{ten}\n\n{ten}\n"),
        "{stderr}"
    );
    let scores: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let overall = &scores["overall"];
    let close = |v: &serde_json::Value, want: f64| (v.as_f64().unwrap() - want).abs() < 1e-9;
    assert!(close(&overall["precision"], 12.0 / 22.0), "{overall}");
    assert!(close(&overall["recall"], 1.0), "{overall}");
    assert!(close(&overall["f1"], 24.0 / 34.0), "{overall}");
    assert!(close(&overall["sequence"], 24.0 / 34.0), "{overall}");
    assert_eq!(overall["pages"], 1);
    assert!(stdout.contains("macro token F1 0.706"), "{stdout}");
}
