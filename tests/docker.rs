//! docker/Dockerfile and docker/compose.yaml against the binary they run.
//! No Docker engine is needed: the files are parsed (compose as YAML, the
//! Dockerfile as text) and every `spider` command line in them is checked
//! against `spider --help` and `spider <subcommand> --help`, so a renamed
//! subcommand or flag fails here instead of in a container.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Component, Path, PathBuf};
use std::process::Command;

use serde_yaml::Value;

fn repo() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn read(rel: &str) -> String {
    let path = repo().join(rel);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()))
}

/// `spider ARGS --help`, which must succeed.
fn help(args: &[&str]) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_spider"))
        .args(args)
        .arg("--help")
        .env_remove("DATABASE_URL")
        .output()
        .expect("run spider");
    assert!(
        out.status.success(),
        "`spider {} --help` failed: {}",
        args.join(" "),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// The subcommand names listed under `Commands:` in `spider --help`.
fn subcommands(top_help: &str) -> BTreeSet<String> {
    let mut names = BTreeSet::new();
    let mut in_commands = false;
    for line in top_help.lines() {
        if line.trim_end() == "Commands:" {
            in_commands = true;
            continue;
        }
        if !in_commands {
            continue;
        }
        if line.trim().is_empty() || !line.starts_with(' ') {
            // A blank line or the next heading ends the list.
            if !names.is_empty() {
                break;
            }
            continue;
        }
        // `  name  description`; wrapped descriptions are indented deeper.
        if line.starts_with("  ")
            && !line.starts_with("   ")
            && let Some(name) = line.split_whitespace().next()
        {
            names.insert(name.to_string());
        }
    }
    names
}

/// The `--long` flags a help text lists as options (a line that starts with
/// `--flag` or `-f, --flag`; flags only mentioned in descriptions do not
/// count).
fn long_flags(help: &str) -> BTreeSet<String> {
    let mut flags = BTreeSet::new();
    for line in help.lines() {
        let line = line.trim_start();
        let line = match line.as_bytes() {
            [b'-', c, b',', b' ', ..] if *c != b'-' => &line[4..],
            _ => line,
        };
        if let Some(rest) = line.strip_prefix("--") {
            let name: String = rest
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '-')
                .collect();
            if !name.is_empty() {
                flags.insert(format!("--{name}"));
            }
        }
    }
    flags
}

/// Checks one command line given to the `spider` binary (`argv` without the
/// program name): its subcommand exists and each of its flags is accepted.
/// `origin` says where the line came from, for the failure message.
fn check_spider_args(origin: &str, argv: &[String], commands: &BTreeSet<String>) {
    let Some(sub) = argv.first() else {
        panic!("{origin}: runs spider with no subcommand");
    };
    assert!(
        commands.contains(sub),
        "{origin}: `spider {sub}` is not a subcommand of spider (spider --help lists: {})",
        commands.iter().cloned().collect::<Vec<_>>().join(", ")
    );
    let accepted = long_flags(&help(&[sub]));
    for arg in &argv[1..] {
        if !arg.starts_with("--") {
            continue;
        }
        let flag = arg.split('=').next().unwrap_or(arg);
        assert!(
            accepted.contains(flag),
            "{origin}: `spider {sub}` has no flag {flag} (spider {sub} --help names: {})",
            accepted.iter().cloned().collect::<Vec<_>>().join(", ")
        );
    }
}

// ---- compose.yaml ----

fn strings(value: &Value, what: &str) -> Vec<String> {
    let Some(items) = value.as_sequence() else {
        panic!("{what} is not a list (use the list form: [\"serve\", ...]): {value:?}");
    };
    items
        .iter()
        .map(|v| match v {
            Value::String(s) => s.clone(),
            Value::Number(n) => n.to_string(),
            other => panic!("{what} has a non-string item {other:?}"),
        })
        .collect()
}

/// A service's environment, whether written as a map or as `KEY=VALUE` items.
fn environment(service: &Value) -> BTreeMap<String, String> {
    let mut env = BTreeMap::new();
    match service.get("environment") {
        Some(Value::Mapping(map)) => {
            for (k, v) in map {
                let k = k.as_str().expect("environment key").to_string();
                let v = match v {
                    Value::String(s) => s.clone(),
                    Value::Number(n) => n.to_string(),
                    Value::Bool(b) => b.to_string(),
                    _ => String::new(),
                };
                env.insert(k, v);
            }
        }
        Some(Value::Sequence(items)) => {
            for item in items {
                let item = item.as_str().expect("environment item");
                let (k, v) = item.split_once('=').unwrap_or((item, ""));
                env.insert(k.to_string(), v.to_string());
            }
        }
        _ => {}
    }
    env
}

/// `a/b/../c` as `a/c`, without touching the file system.
fn normalise(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in path.components() {
        match c {
            Component::ParentDir => {
                out.pop();
            }
            Component::CurDir => {}
            other => out.push(other),
        }
    }
    out
}

/// The Dockerfile a service's `build` points at (compose resolves `context`
/// against the compose file's folder and `dockerfile` against the context).
fn dockerfile_of(build: &Value) -> PathBuf {
    let compose_dir = repo().join("docker");
    let (context, dockerfile) = match build {
        Value::String(context) => (context.as_str(), "Dockerfile"),
        Value::Mapping(_) => (
            build.get("context").and_then(Value::as_str).unwrap_or("."),
            build
                .get("dockerfile")
                .and_then(Value::as_str)
                .unwrap_or("Dockerfile"),
        ),
        other => panic!("build is neither a path nor a mapping: {other:?}"),
    };
    normalise(&compose_dir.join(context).join(dockerfile))
}

// ---- Dockerfile ----

/// One instruction: keyword (upper case) and the rest of its logical line.
struct Instruction {
    keyword: String,
    rest: String,
}

/// The Dockerfile's stages (split at `FROM`), each a list of instructions;
/// comments dropped and `\` continuations joined.
fn stages(text: &str) -> Vec<Vec<Instruction>> {
    let mut logical = Vec::new();
    let mut current = String::new();
    for line in text.lines() {
        let trimmed = line.trim();
        if trimmed.starts_with('#') || (trimmed.is_empty() && current.is_empty()) {
            continue;
        }
        if let Some(head) = trimmed.strip_suffix('\\') {
            current.push_str(head);
            current.push(' ');
        } else {
            current.push_str(trimmed);
            logical.push(std::mem::take(&mut current));
        }
    }
    if !current.trim().is_empty() {
        logical.push(current);
    }
    let mut stages: Vec<Vec<Instruction>> = Vec::new();
    for line in logical {
        let (keyword, rest) = line.split_once(char::is_whitespace).unwrap_or((&line, ""));
        let instruction = Instruction {
            keyword: keyword.to_ascii_uppercase(),
            rest: rest.trim().to_string(),
        };
        if instruction.keyword == "FROM" {
            stages.push(Vec::new());
        }
        match stages.last_mut() {
            Some(stage) => stage.push(instruction),
            None => assert!(
                instruction.keyword == "ARG",
                "Dockerfile: {} before the first FROM",
                instruction.keyword
            ),
        }
    }
    stages
}

/// A JSON-array (exec form) argument list.
fn exec_form(what: &str, text: &str) -> Vec<String> {
    serde_json::from_str(text).unwrap_or_else(|e| {
        panic!("Dockerfile: {what} is not in JSON-array (exec) form: {text:?} ({e})")
    })
}

fn last<'a>(stage: &'a [Instruction], keyword: &str) -> Option<&'a Instruction> {
    stage.iter().rev().find(|i| i.keyword == keyword)
}

#[test]
fn compose_commands_exist_in_the_cli() {
    let commands = subcommands(&help(&[]));
    assert!(
        !commands.is_empty(),
        "found no subcommands under `Commands:` in spider --help"
    );
    let our_dockerfile = repo().join("docker/Dockerfile");

    // The Dockerfile: ENTRYPOINT is spider, CMD and HEALTHCHECK are spider
    // command lines, the runtime stage has Chromium and a non-root user.
    let dockerfile = read("docker/Dockerfile");
    let stages = stages(&dockerfile);
    assert!(
        stages.len() >= 2,
        "Dockerfile: expected a build stage and a runtime stage, found {} stage(s)",
        stages.len()
    );
    let runtime = stages.last().expect("a stage");
    let entrypoint =
        last(runtime, "ENTRYPOINT").expect("Dockerfile: no ENTRYPOINT in the runtime stage");
    assert_eq!(
        exec_form("ENTRYPOINT", &entrypoint.rest),
        ["spider"],
        "Dockerfile: the ENTRYPOINT should be [\"spider\"] (compose commands and CMD are spider's arguments)"
    );
    let cmd = last(runtime, "CMD").expect("Dockerfile: no CMD in the runtime stage");
    check_spider_args("Dockerfile CMD", &exec_form("CMD", &cmd.rest), &commands);
    let healthcheck =
        last(runtime, "HEALTHCHECK").expect("Dockerfile: no HEALTHCHECK in the runtime stage");
    let (_, probe) = healthcheck
        .rest
        .split_once("CMD")
        .unwrap_or_else(|| panic!("Dockerfile: HEALTHCHECK has no CMD: {:?}", healthcheck.rest));
    let probe = exec_form("HEALTHCHECK CMD", probe.trim());
    assert_eq!(
        probe.first().map(String::as_str),
        Some("spider"),
        "Dockerfile: HEALTHCHECK should run spider, runs {probe:?}"
    );
    check_spider_args("Dockerfile HEALTHCHECK", &probe[1..], &commands);
    let installs_chromium = runtime.iter().any(|i| {
        i.keyword == "RUN"
            && i.rest.contains("apt-get install")
            && i.rest.split_whitespace().any(|w| w == "chromium")
    });
    assert!(
        installs_chromium,
        "Dockerfile: the runtime stage does not apt-get install chromium"
    );
    let user = last(runtime, "USER")
        .expect("Dockerfile: the runtime stage has no USER (it would run as root)");
    let name = user.rest.split(':').next().unwrap_or("").trim();
    assert!(
        !name.is_empty() && name != "root" && name != "0",
        "Dockerfile: the runtime stage's USER is {:?}, which is root",
        user.rest
    );

    // compose.yaml: every service running our image runs real spider
    // command lines.
    let compose: Value = serde_yaml::from_str(&read("docker/compose.yaml"))
        .unwrap_or_else(|e| panic!("docker/compose.yaml is not valid YAML: {e}"));
    let services = compose
        .get("services")
        .and_then(Value::as_mapping)
        .expect("docker/compose.yaml has no services mapping");
    let mut ours: BTreeMap<String, &Value> = BTreeMap::new();
    for (name, service) in services {
        let name = name.as_str().expect("service name").to_string();
        if let Some(build) = service.get("build") {
            let path = dockerfile_of(build);
            assert_eq!(
                path,
                our_dockerfile,
                "service {name}: build points at {}, not docker/Dockerfile",
                path.display()
            );
            ours.insert(name, service);
        }
    }
    assert!(
        !ours.is_empty(),
        "docker/compose.yaml: no service is built from docker/Dockerfile"
    );
    for (name, service) in &ours {
        assert!(
            service.get("entrypoint").is_none(),
            "service {name}: overrides the entrypoint; its command would not be spider's arguments"
        );
        let command = service
            .get("command")
            .unwrap_or_else(|| panic!("service {name}: no command (write it out, in list form)"));
        let argv = strings(command, &format!("service {name}'s command"));
        check_spider_args(&format!("service {name} command"), &argv, &commands);
        if let Some(test) = service.get("healthcheck").and_then(|h| h.get("test")) {
            let test = match test {
                Value::String(s) => vec!["CMD-SHELL".to_string(), s.clone()],
                _ => strings(test, &format!("service {name}'s healthcheck test")),
            };
            let argv: Vec<String> = match test.first().map(String::as_str) {
                Some("CMD") => test[1..].to_vec(),
                Some("CMD-SHELL") => test[1..]
                    .join(" ")
                    .split_whitespace()
                    .map(str::to_string)
                    .collect(),
                _ => panic!(
                    "service {name}: healthcheck test should start with CMD or CMD-SHELL: {test:?}"
                ),
            };
            if argv.first().map(String::as_str) == Some("spider") {
                check_spider_args(
                    &format!("service {name} healthcheck"),
                    &argv[1..],
                    &commands,
                );
            }
        }
    }

    // One server, exactly two workers, all on the same PostgreSQL database,
    // whose host is the compose postgres service.
    let command_of = |service: &Value| {
        service
            .get("command")
            .map(|c| strings(c, "command"))
            .unwrap_or_default()
    };
    let servers: Vec<&String> = ours
        .iter()
        .filter(|(_, s)| command_of(s).first().map(String::as_str) == Some("serve"))
        .map(|(n, _)| n)
        .collect();
    assert_eq!(
        servers.len(),
        1,
        "docker/compose.yaml: expected one service running `serve`, found {servers:?}"
    );
    let workers: Vec<&String> = ours
        .iter()
        .filter(|(_, s)| command_of(s).first().map(String::as_str) == Some("worker"))
        .map(|(n, _)| n)
        .collect();
    assert_eq!(
        workers.len(),
        2,
        "docker/compose.yaml: expected exactly two services running `worker`, found {workers:?}"
    );
    let server_db = environment(ours[servers[0]])
        .remove("DATABASE_URL")
        .unwrap_or_else(|| panic!("service {}: no DATABASE_URL", servers[0]));
    assert!(
        server_db.starts_with("postgres://") || server_db.starts_with("postgresql://"),
        "service {}: DATABASE_URL {server_db:?} is not a PostgreSQL URL",
        servers[0]
    );
    let host = server_db
        .split_once('@')
        .map(|(_, rest)| rest)
        .unwrap_or(&server_db)
        .split([':', '/'])
        .next()
        .unwrap_or("");
    assert!(
        services.contains_key(host),
        "service {}: DATABASE_URL's host {host:?} is not a service of docker/compose.yaml",
        servers[0]
    );
    for worker in &workers {
        let db = environment(ours[*worker]).remove("DATABASE_URL");
        assert_eq!(
            db.as_deref(),
            Some(server_db.as_str()),
            "service {worker}: DATABASE_URL differs from {}'s",
            servers[0]
        );
    }
}
