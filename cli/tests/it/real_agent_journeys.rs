//! The journeys the real agents are tested on, on any backend: a code run that opens a
//! PR and an Update PR that adds a commit to the same PR, a review stage, and a model
//! that refuses the key. The model is the stand-in model server, reached only through
//! the run's key forwarder; everything else is real (Claude Code and the Codex CLI from
//! PyPI, git, the `handoff` binary, the Secret Service, the Docker engine).

use handoff_test_support as support;

use support::cli_process::{ok_text, text, Cli};
use support::fake_github::{FakeGithub, OWNER};
use support::model_server::{
    ModelServer, ModelTurn, INPUT_TOKENS_PER_TURN, OUTPUT_TOKENS_PER_TURN,
};
use support::pipeline_world::{REPO, SCRIPTED_AGENT};
use support::real_agents::RealAgent;
use support::secret_service::SecretService;

const ANTHROPIC_KEY: &str = "sk-ant-real-agent-test-0123456789";
const OPENAI_KEY: &str = "sk-openai-real-agent-test-0123456789";

/// The setting and the keyring name of the agent's provider, and its key.
fn provider_of(agent: RealAgent) -> (&'static str, &'static str, &'static str) {
    match agent {
        RealAgent::Claude => ("provider.anthropic.api_base", "anthropic", ANTHROPIC_KEY),
        RealAgent::Codex | RealAgent::Aider => ("provider.openai.api_base", "openai", OPENAI_KEY),
    }
}

/// The key header a model call carried.
fn key_header(agent: RealAgent, call: &support::model_server::ModelRequest) -> Option<String> {
    match agent {
        RealAgent::Claude => call.x_api_key.clone(),
        RealAgent::Codex | RealAgent::Aider => call.authorization.clone(),
    }
}

/// Where the agent runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backend {
    /// A process on this machine.
    Local,
    /// A container of an image built from Handoff's recipe with the real program from
    /// PyPI, on the allow-list network with the key forwarder in the egress gate.
    Docker,
}

/// Signs in, connects the repository on `backend` with `agent`'s preset, and sends its
/// provider's calls to `model` with the provider's key in the keyring.
pub async fn connect(
    fake: &FakeGithub,
    cli: &Cli<'_>,
    agent: RealAgent,
    backend: Backend,
    model: &ModelServer,
) {
    fake.create_repo_with_files(
        REPO,
        "main",
        &[
            (".handoff/agent.sh", SCRIPTED_AGENT),
            ("README.md", "# Hello\n"),
        ],
    );
    match backend {
        Backend::Local => cli.connect_scripted_repo(fake, "local", &[]).await,
        Backend::Docker => {
            cli.connect_scripted_repo(fake, "docker", &[]).await;
            let image = agent.image_built_by(cli).await;
            ok_text(
                &cli.run(&["repo", "set", REPO, "--docker-image", &image])
                    .await,
            );
        }
    }
    ok_text(
        // On the local backend the agent changes only with the owner's confirmation.
        &cli.run(&[
            "repo",
            "set",
            REPO,
            "--agent",
            agent.name(),
            "--confirm-no-isolation",
        ])
        .await,
    );
    if agent == RealAgent::Codex {
        // Codex 0.163.0's model has no price in the default table, so each call is
        // reserved at the table's dearest price with the most output it may write
        // (about $10), more than the default $5 run budget holds: the journeys run with
        // no run budget, and its calls show "price unknown" (the budget test gives the
        // model a price).
        ok_text(&cli.run(&["config", "set", "budget.run_usd", "none"]).await);
    }
    let (setting, keyring_name, key) = provider_of(agent);
    ok_text(
        &cli.run(&["config", "set", setting, &model.api_base()])
            .await,
    );
    ok_text(
        &cli.run_with_input(&["secrets", "set", keyring_name], key)
            .await,
    );
}

/// `handoff runs show RUN --json`'s run.
pub async fn run_shown(cli: &Cli<'_>, run: &str) -> serde_json::Value {
    let shown: serde_json::Value =
        serde_json::from_str(&ok_text(&cli.run(&["runs", "show", run, "--json"]).await)).unwrap();
    shown["run"].clone()
}

/// What run `run` spent as its key forwarder measured it: every call of `model` a step,
/// with the model the agent asked for; priced from the default table when that model is
/// in it, its tokens "price unknown" (never $0) when not.
pub async fn metered_as_the_model_saw_it(cli: &Cli<'_>, run: &str, model: &ModelServer) {
    let shown = run_shown(cli, run).await;
    assert_eq!(shown["spend_source"], "metered", "{shown}");
    let steps: serde_json::Value =
        serde_json::from_str(&ok_text(&cli.run(&["runs", "steps", run, "--json"]).await)).unwrap();
    let steps = steps.as_array().unwrap();
    let asked = model.model_calls();
    assert!(!steps.is_empty() && steps.len() <= asked.len(), "{steps:?}");
    let model_name = asked[0].body["model"].as_str().unwrap().to_owned();
    assert!(
        steps
            .iter()
            .all(|step| step["model"] == model_name.as_str()),
        "{steps:?}"
    );
    let tokens = shown["tokens_in"].as_i64().unwrap() + shown["tokens_out"].as_i64().unwrap();
    match handoff::domain::model_prices::PriceTable::default().price_of(&model_name) {
        Some(_) => assert!(
            shown["llm_cost_usd"]
                .as_f64()
                .is_some_and(|cost| cost > 0.0),
            "{model_name} has a price: {shown}"
        ),
        None => {
            assert!(shown["llm_cost_usd"].is_null(), "{shown}");
            assert_eq!(shown["unpriced_tokens"].as_i64(), Some(tokens), "{shown}");
            let said = ok_text(&cli.run(&["runs", "show", run]).await);
            assert!(said.contains("price unknown"), "{said}");
        }
    }
}

/// The agent asked the network for nothing the allow-list refused (telemetry, update
/// checks, its provider's own host past the forwarder); the gates go afterwards.
async fn asked_nothing_beyond_the_allow_list(cli: &Cli<'_>) {
    let logs = cli.egress_gate_logs().await;
    cli.remove_egress_gates().await;
    assert!(
        !logs.is_empty(),
        "the repository's egress gate ran and logged"
    );
    assert!(
        !logs.contains("egress refused"),
        "the agent asked for something off the allow-list: {logs}"
    );
}

/// A code run and then an Update PR by the real `agent` on `backend`, with the model's
/// words.
pub async fn code_run_and_update(agent: RealAgent, backend: Backend) {
    let fake = FakeGithub::start().await;
    let keyring = SecretService::start();
    let dir = tempfile::tempdir().unwrap();
    let bin = tempfile::tempdir().unwrap();
    let cli = Cli {
        data_dir: dir.path(),
        keyring: &keyring,
    };
    let model = ModelServer::start(vec![
        ModelTurn::RunCommand("env | grep -E '^(ANTHROPIC|OPENAI|CODEX)_' | sort".to_owned()),
        ModelTurn::WriteFile {
            path: "docs/greeting.md".to_owned(),
            contents: format!("Hello from {}\n", agent.name()),
        },
        ModelTurn::Text("I added docs/greeting.md.".to_owned()),
    ])
    .await;
    connect(&fake, &cli, agent, backend, &model).await;
    let (_, _, key) = provider_of(agent);
    let feedback = cli
        .add_feedback("Greet the readers\nAdd a greeting page.")
        .await;
    let path = agent.path_with_agent(bin.path());
    // A home of the test's own: the local backend's agent runs with the owner's home,
    // whose shell start-up files and agent settings are not the test's.
    let home = tempfile::tempdir().unwrap();
    let home = home.path().to_str().unwrap().to_owned();

    let first = cli
        .run_with(
            &["run", &feedback],
            None,
            &[("PATH", &path), ("HOME", &home)],
        )
        .await;

    let shown = ok_text(&first);
    assert!(shown.contains("PR #1 opened"), "{shown}");
    let branch = fake.pulls(REPO)[0].1.clone();
    assert_eq!(
        fake.file_on_branch(REPO, &branch, "docs/greeting.md")
            .as_deref(),
        Some(format!("Hello from {}\n", agent.name()).as_str()),
        "the commit holds what the model asked the agent to write"
    );
    assert_eq!(
        fake.files_changed(REPO, &branch, "main"),
        ["docs/greeting.md"],
        "nothing of the agent's own (settings, sessions, caches) was committed"
    );
    let calls = model.model_calls();
    assert_eq!(calls.len(), 3, "one model call per turn: {calls:?}");
    assert!(
        calls[0].body_text().contains("Add a greeting page."),
        "the feedback reached the model"
    );
    // The provider saw the real key on every call, added by the forwarder; inside the
    // run, the agent's environment held only a placeholder.
    for call in &model.received() {
        let header = key_header(agent, call).unwrap_or_default();
        assert!(header.ends_with(key), "{header:?} on {}", call.path);
    }
    let environment_seen = calls[1].body_text();
    assert!(
        environment_seen.contains("handoff-placeholder-"),
        "the command's output came back with the placeholder: {environment_seen}"
    );
    assert!(
        !environment_seen.contains(key),
        "the key was in the sandbox"
    );
    assert!(
        environment_seen.contains(match backend {
            Backend::Local => "http://127.0.0.1:",
            Backend::Docker => "http://handoff-gate:3129",
        }),
        "the base address named the forwarder"
    );
    assert!(
        !environment_seen.contains(&model.api_base()),
        "the agent was pointed at the forwarder, not the provider"
    );
    // The run's log streams the agent's own output; it never holds the key.
    let logs = ok_text(&cli.run(&["runs", "logs", "1"]).await);
    assert!(!logs.contains(key));
    // Its JSON events read as what it did.
    let steps: &[&str] = match agent {
        RealAgent::Claude => &[
            "claude: started",
            "claude → Bash env | grep",
            "claude → Write ",
            "claude: I added docs/greeting.md.",
            "claude: done in ",
        ],
        _ => &[
            "codex: started",
            "codex → $ ",
            "  ← exit 0: ",
            "codex: I added docs/greeting.md.",
            "codex: turn done (3600 tokens in, 240 out)",
        ],
    };
    for step in steps {
        assert!(logs.contains(step), "{step:?} is not in the log:\n{logs}");
    }
    assert!(
        !logs.contains("\"type\":"),
        "a raw event reached the log:\n{logs}"
    );
    // What the run spent.
    let run = run_shown(&cli, "1").await;
    assert_eq!(
        run["tokens_in"].as_i64(),
        Some(3 * INPUT_TOKENS_PER_TURN as i64),
        "{run}"
    );
    assert_eq!(
        run["tokens_out"].as_i64(),
        Some(3 * OUTPUT_TOKENS_PER_TURN as i64),
        "{run}"
    );
    // Measured at the key forwarder; Claude Code's model is in the price table, and the
    // meter's dollars are Claude Code's own, to the cent's hundredth.
    metered_as_the_model_saw_it(&cli, "1", &model).await;
    if agent == RealAgent::Claude {
        let metered = run["llm_cost_usd"].as_f64().unwrap_or_default();
        let reported: f64 = logs
            .lines()
            .find(|line| line.starts_with("claude: done in "))
            .and_then(|line| line.rsplit('$').next())
            .and_then(|dollars| dollars.trim().parse().ok())
            .expect("Claude Code says what it spent");
        assert!(
            metered > 0.0 && (metered - reported).abs() < 0.00005,
            "metered ${metered} against Claude Code's ${reported}: {run}"
        );
    }

    // Update PR: a follow-up adds a commit to the same branch and PR.
    model.play_next(vec![
        ModelTurn::WriteFile {
            path: "docs/greeting.md".to_owned(),
            contents: "Hello again\n".to_owned(),
        },
        ModelTurn::Text("Updated the greeting.".to_owned()),
    ]);
    let second = ok_text(
        &cli.run_with(
            &["iterate", &feedback, "-m", "Say hello again instead."],
            None,
            &[("PATH", &path), ("HOME", &home)],
        )
        .await,
    );
    assert!(second.contains("PR #1 updated"), "{second}");
    assert_eq!(fake.pulls(REPO).len(), 1, "the same PR");
    assert_eq!(
        fake.file_on_branch(REPO, &branch, "docs/greeting.md")
            .as_deref(),
        Some("Hello again\n")
    );
    assert_eq!(fake.commits_ahead(REPO, &branch, "main").len(), 2);
    let update_call = &model.model_calls()[3];
    assert!(
        update_call.body_text().contains("Say hello again instead."),
        "the follow-up reached the model"
    );
    if backend == Backend::Docker {
        asked_nothing_beyond_the_allow_list(&cli).await;
    }
}

/// The QA stages by the real `agent` on `backend`, one after the other on one PR: the
/// review and the plan comments hold the model's text, written to the output file the
/// prompt names; the test stage runs a command and files its failing scenario as an
/// issue; the fix stage pushes the model's change to the PR's branch.
pub async fn qa_stages(agent: RealAgent, backend: Backend) {
    let fake = FakeGithub::start().await;
    let keyring = SecretService::start();
    let dir = tempfile::tempdir().unwrap();
    let bin = tempfile::tempdir().unwrap();
    let cli = Cli {
        data_dir: dir.path(),
        keyring: &keyring,
    };
    let review = format!(
        "## Review by {}\n\n- `src/button.css`: 20px is too small.\n",
        agent.name()
    );
    let model = ModelServer::start(vec![
        ModelTurn::WriteOutput {
            file: "output.md".to_owned(),
            contents: review.clone(),
        },
        ModelTurn::Text("The review is written.".to_owned()),
    ])
    .await;
    connect(&fake, &cli, agent, backend, &model).await;
    fake.create_branch(REPO, "feature/signup", "main");
    fake.push_commit(
        REPO,
        "feature/signup",
        "Signup",
        &[("src/button.css", ".signup { height: 20px; }\n")],
    );
    let pr = fake.create_pull(REPO, OWNER, "feature/signup", "Signup button");
    let pr_text = pr.to_string();
    let path = agent.path_with_agent(bin.path());
    // A home of the test's own: the local backend's agent runs with the owner's home,
    // whose shell start-up files and agent settings are not the test's.
    let home = tempfile::tempdir().unwrap();
    let home = home.path().to_str().unwrap().to_owned();
    let stage = |name: &'static str| {
        let (cli, path, home, pr) = (&cli, &path, &home, &pr_text);
        async move {
            ok_text(
                &cli.run_with(
                    &["qa", name, REPO, pr],
                    None,
                    &[("PATH", path), ("HOME", home)],
                )
                .await,
            )
        }
    };
    let comment = |marker: &str| {
        fake.comments(REPO, pr)
            .into_iter()
            .map(|(_, _, body)| body)
            .find(|body| body.starts_with(marker))
            .unwrap_or_else(|| panic!("no {marker} comment"))
    };

    let reviewed = stage("review").await;
    assert!(reviewed.contains("review posted"), "{reviewed}");
    assert!(comment("<!-- sandbox-qa-review -->").contains(review.trim()));
    let prompt = model.model_calls()[0].body_text();
    assert!(
        !prompt.contains("$HANDOFF_OUTPUT_DIR"),
        "the prompt names the output folder by its path"
    );

    model.play_next(vec![
        ModelTurn::WriteOutput {
            file: "output.md".to_owned(),
            contents: "1. Measure the signup button: 44px expected.\n".to_owned(),
        },
        ModelTurn::Text("The plan is written.".to_owned()),
    ]);
    let planned = stage("plan").await;
    assert!(planned.contains("test plan posted"), "{planned}");
    assert!(comment("<!-- sandbox-qa-plan -->").contains("Measure the signup button"));

    model.play_next(vec![
        ModelTurn::RunCommand("cat src/button.css".to_owned()),
        ModelTurn::WriteOutput {
            file: "results.json".to_owned(),
            contents: r#"{"scenarios": [{"name": "Signup button height", "passed": false, "evidence": "src/button.css says 20px"}]}"#.to_owned(),
        },
        ModelTurn::Text("One scenario failed.".to_owned()),
    ]);
    let calls_before_test = model.model_calls().len();
    let tested = stage("test").await;
    assert!(
        tested.contains("1 scenarios: 0 passed, 1 failed; issues #"),
        "{tested}"
    );
    let command_output = model.model_calls()[calls_before_test + 1].body_text();
    assert!(
        command_output.contains(".signup { height: 20px; }"),
        "the command ran in the PR's checkout and its output reached the model"
    );

    model.play_next(vec![
        ModelTurn::WriteFile {
            path: "src/button.css".to_owned(),
            contents: ".signup { height: 44px; }\n".to_owned(),
        },
        ModelTurn::WriteOutput {
            file: "output.md".to_owned(),
            contents: "Made the signup button 44px high.\n".to_owned(),
        },
        ModelTurn::Text("Fixed.".to_owned()),
    ]);
    let fixed = stage("fix").await;
    assert!(
        fixed.contains("fix: 1 commit(s) pushed to feature/signup"),
        "{fixed}"
    );
    assert_eq!(
        fake.file_on_branch(REPO, "feature/signup", "src/button.css")
            .as_deref(),
        Some(".signup { height: 44px; }\n")
    );
    // Every stage's model calls were metered: runs 1 to 4, review to fix.
    for run in ["1", "2", "3", "4"] {
        metered_as_the_model_saw_it(&cli, run, &model).await;
    }
    if backend == Backend::Docker {
        asked_nothing_beyond_the_allow_list(&cli).await;
    }
}

/// A model that answers every call with HTTP `status` and `message` ends the run, once
/// the agent gives up retrying, with the agent's own account of it, which holds `named`.
pub async fn a_model_error_is_named(
    agent: RealAgent,
    backend: Backend,
    (status, message): (u16, &str),
    named: &str,
) {
    let fake = FakeGithub::start().await;
    let keyring = SecretService::start();
    let dir = tempfile::tempdir().unwrap();
    let bin = tempfile::tempdir().unwrap();
    let cli = Cli {
        data_dir: dir.path(),
        keyring: &keyring,
    };
    let refusal = ModelTurn::Error {
        status,
        message: message.to_owned(),
    };
    let model = ModelServer::start(vec![refusal]).await;
    connect(&fake, &cli, agent, backend, &model).await;
    let feedback = cli.add_feedback("Greet the readers").await;
    let path = agent.path_with_agent(bin.path());
    // A home of the test's own: the local backend's agent runs with the owner's home,
    // whose shell start-up files and agent settings are not the test's.
    let home = tempfile::tempdir().unwrap();
    let home = home.path().to_str().unwrap().to_owned();

    let failed = cli
        .run_with(
            &["run", &feedback],
            None,
            &[("PATH", &path), ("HOME", &home)],
        )
        .await;

    assert!(!failed.status.success());
    let run = run_shown(&cli, "1").await;
    let reason = run["failure_message"].as_str().unwrap_or_default();
    assert!(
        reason.contains("the agent exited with code") && reason.to_lowercase().contains(named),
        "the failure names the model's error: {run} / {}",
        text(&failed)
    );
    assert!(fake.pulls(REPO).is_empty(), "nothing was opened");
    if backend == Backend::Docker {
        asked_nothing_beyond_the_allow_list(&cli).await;
    }
}

/// A code run and an Update PR by the real aider on `backend`. aider sends one request
/// per message and edits files from the model's text (a SEARCH/REPLACE block that
/// creates the file); it runs no command, so it gets no QA stage.
pub async fn aider_code_run_and_update(backend: Backend) {
    let agent = RealAgent::Aider;
    let fake = FakeGithub::start().await;
    let keyring = SecretService::start();
    let dir = tempfile::tempdir().unwrap();
    let bin = tempfile::tempdir().unwrap();
    let cli = Cli {
        data_dir: dir.path(),
        keyring: &keyring,
    };
    let model = ModelServer::start(vec![ModelTurn::WriteFile {
        path: "docs/greeting.md".to_owned(),
        contents: "Hello from aider\n".to_owned(),
    }])
    .await;
    connect(&fake, &cli, agent, backend, &model).await;
    let feedback = cli
        .add_feedback("Greet the readers\nAdd a greeting page.")
        .await;
    let path = agent.path_with_agent(bin.path());
    let home = tempfile::tempdir().unwrap();
    let home = home.path().to_str().unwrap().to_owned();
    let environment = [("PATH", path.as_str()), ("HOME", home.as_str())];

    let first = ok_text(&cli.run_with(&["run", &feedback], None, &environment).await);

    assert!(first.contains("PR #1 opened"), "{first}");
    let branch = fake.pulls(REPO)[0].1.clone();
    assert_eq!(
        fake.file_on_branch(REPO, &branch, "docs/greeting.md")
            .as_deref(),
        Some("Hello from aider\n")
    );
    assert_eq!(
        fake.files_changed(REPO, &branch, "main"),
        ["docs/greeting.md"],
        "only what the model asked for: no .gitignore, history or cache of aider's"
    );
    let calls = model.model_calls();
    assert_eq!(calls.len(), 1, "{calls:?}");
    assert!(calls[0].path.starts_with("/v1/chat/completions"));
    assert!(calls[0].body_text().contains("Add a greeting page."));
    assert_eq!(
        calls[0].authorization.as_deref(),
        Some(format!("Bearer {OPENAI_KEY}").as_str()),
        "the forwarder added the key"
    );
    let run = run_shown(&cli, "1").await;
    assert_eq!(
        run["tokens_in"].as_i64(),
        Some(INPUT_TOKENS_PER_TURN as i64),
        "{run}"
    );
    assert_eq!(
        run["tokens_out"].as_i64(),
        Some(OUTPUT_TOKENS_PER_TURN as i64),
        "{run}"
    );
    assert!(
        run["llm_cost_usd"].as_f64().is_some_and(|cost| cost > 0.0),
        "aider's model is priced: {run}"
    );
    metered_as_the_model_saw_it(&cli, "1", &model).await;

    // The model names a new file: to change one, aider wants its current text in the
    // SEARCH half, which only a model that was shown the file can give.
    model.play_next(vec![ModelTurn::WriteFile {
        path: "docs/farewell.md".to_owned(),
        contents: "Goodbye from aider\n".to_owned(),
    }]);
    let second = ok_text(
        &cli.run_with(
            &["iterate", &feedback, "-m", "Say goodbye too."],
            None,
            &environment,
        )
        .await,
    );
    assert!(second.contains("PR #1 updated"), "{second}");
    assert_eq!(
        fake.file_on_branch(REPO, &branch, "docs/farewell.md")
            .as_deref(),
        Some("Goodbye from aider\n")
    );
    assert_eq!(
        fake.file_on_branch(REPO, &branch, "docs/greeting.md")
            .as_deref(),
        Some("Hello from aider\n"),
        "the first run's commit stays"
    );
    assert_eq!(fake.commits_ahead(REPO, &branch, "main").len(), 2);
    if backend == Backend::Docker {
        asked_nothing_beyond_the_allow_list(&cli).await;
    }
}

/// Suggest lessons, run by the real agent: it reads the owner's edit of its review (a
/// diff among its inputs, through a command it runs) and proposes a rule that names it;
/// once the owner accepts it, the next code run's prompt, as the model receives it,
/// carries the rule.
pub async fn lessons_from_the_owners_edit(agent: RealAgent, backend: Backend) {
    let fake = FakeGithub::start().await;
    let keyring = SecretService::start();
    let dir = tempfile::tempdir().unwrap();
    let bin = tempfile::tempdir().unwrap();
    let cli = Cli {
        data_dir: dir.path(),
        keyring: &keyring,
    };
    let agents_review = "- `src/button.css`: the button should be 44px high.";
    let model = ModelServer::start(vec![
        ModelTurn::WriteOutput {
            file: "output.md".to_owned(),
            contents: format!("{agents_review}\n"),
        },
        ModelTurn::Text("The review is written.".to_owned()),
    ])
    .await;
    connect(&fake, &cli, agent, backend, &model).await;
    fake.create_branch(REPO, "feature/signup", "main");
    fake.push_commit(
        REPO,
        "feature/signup",
        "Signup",
        &[("src/button.css", ".signup { height: 20px; }\n")],
    );
    let pr = fake.create_pull(REPO, OWNER, "feature/signup", "Signup button");
    let path = agent.path_with_agent(bin.path());
    let home = tempfile::tempdir().unwrap();
    let home = home.path().to_str().unwrap().to_owned();
    let with_agent = |arguments: Vec<String>| {
        let (cli, path, home) = (&cli, &path, &home);
        async move {
            let arguments: Vec<&str> = arguments.iter().map(String::as_str).collect();
            ok_text(
                &cli.run_with(&arguments, None, &[("PATH", path), ("HOME", home)])
                    .await,
            )
        }
    };
    with_agent(vec![
        "qa".into(),
        "review".into(),
        REPO.into(),
        pr.to_string(),
    ])
    .await;
    let (id, body) = fake
        .comments(REPO, pr)
        .into_iter()
        .map(|(id, _, body)| (id, body))
        .find(|(_, body)| body.starts_with("<!-- sandbox-qa-review -->"))
        .unwrap();
    let owners_review = "- `src/button.css`: buttons are 48px high here, never 44px.";
    fake.edit_comment(id, &body.replace(agents_review, owners_review));
    ok_text(&cli.run(&["sync"]).await);
    let waiting: serde_json::Value = serde_json::from_str(&ok_text(
        &cli.run(&["lessons", "list", REPO, "--json"]).await,
    ))
    .unwrap();
    let correction = waiting["newCorrections"][0]["id"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(correction.starts_with("edit-"), "{waiting}");

    model.play_next(vec![
        ModelTurn::ShowInput {
            file: "corrections.md".to_owned(),
        },
        ModelTurn::WriteOutput {
            file: "lessons.json".to_owned(),
            contents: format!(
                r#"{{"lessons": [{{"rule": "Buttons are 48px high.", "why": "The owner corrected 44px to 48px.", "sources": ["{correction}"], "paths": ["README.md"]}}]}}"#
            ),
        },
        ModelTurn::Text("One lesson proposed.".to_owned()),
    ]);
    let calls_before = model.model_calls().len();
    let suggested = with_agent(vec!["lessons".into(), "suggest".into(), REPO.into()]).await;
    assert!(
        suggested.contains("proposed lesson 1: Buttons are 48px high."),
        "{suggested}"
    );
    let command_output = model.model_calls()[calls_before + 1].body_text();
    assert!(
        command_output.contains(&format!("+{owners_review}"))
            && command_output.contains(&format!("-{agents_review}")),
        "the owner's edit reached the model as a diff: {command_output}"
    );

    ok_text(&cli.run(&["lessons", "accept", "1"]).await);
    let feedback = cli.add_feedback("Make the login button bigger").await;
    model.play_next(vec![
        ModelTurn::WriteFile {
            path: "src/login.css".to_owned(),
            contents: ".login { height: 48px; }\n".to_owned(),
        },
        ModelTurn::Text("Done.".to_owned()),
    ]);
    let calls_before = model.model_calls().len();
    with_agent(vec!["run".into(), feedback]).await;
    let prompt = model.model_calls()[calls_before].body_text();
    assert!(
        prompt.contains("Standing instructions from the repository owner")
            && prompt.contains("- Buttons are 48px high."),
        "the code run's prompt carries the lesson: {prompt}"
    );
}

/// What a `SessionStart` hook in a tree says when it runs: Claude Code adds a hook's
/// output to the conversation, so it would reach the model.
const HOOK_SAYS: &str = "HOOK-IN-THE-TREE-RAN";

/// A `.claude/settings.json` whose `SessionStart` hook says [`HOOK_SAYS`] and leaves a
/// file at `marker` (Claude Code runs it before its first model call).
fn settings_with_a_hook(marker: &str) -> String {
    serde_json::json!({
        "hooks": {
            "SessionStart": [{
                "hooks": [{
                    "type": "command",
                    "command": format!("id > {marker}; echo {HOOK_SAYS}")
                }]
            }]
        }
    })
    .to_string()
}

/// A fork's PR whose tree holds a `SessionStart` hook, reviewed by the real Claude Code.
/// On the local backend the review is refused before anything runs: no hook, no model
/// call. In Docker the review runs, the hook does not (its words never reach the model);
/// the owner's own PR with the same hook shows that Claude Code would run it otherwise.
pub async fn a_forks_claude_hook_never_runs(backend: Backend) {
    let fake = FakeGithub::start().await;
    let keyring = SecretService::start();
    let dir = tempfile::tempdir().unwrap();
    let bin = tempfile::tempdir().unwrap();
    let cli = Cli {
        data_dir: dir.path(),
        keyring: &keyring,
    };
    let model = ModelServer::start(vec![
        ModelTurn::WriteOutput {
            file: "output.md".to_owned(),
            contents: "## Review\n\nThe fork adds a note.\n".to_owned(),
        },
        ModelTurn::Text("The review is written.".to_owned()),
    ])
    .await;
    connect(&fake, &cli, RealAgent::Claude, backend, &model).await;
    let marker_folder = tempfile::tempdir().unwrap();
    let host_marker = marker_folder.path().join("hook-ran");
    // In the sandbox the hook would leave its marker in the run's output folder.
    let marker = match backend {
        Backend::Local => host_marker.display().to_string(),
        Backend::Docker => "\"$HANDOFF_OUTPUT_DIR/hook-ran\"".to_owned(),
    };
    fake.add_user("mallory");
    let settings = settings_with_a_hook(&marker);
    let from_the_fork = fake.create_fork_pull(
        REPO,
        "mallory",
        "docs/note",
        "main",
        "A note",
        &[
            (".claude/settings.json", &settings),
            ("docs/note.md", "A note.\n"),
        ],
    );
    let path = RealAgent::Claude.path_with_agent(bin.path());
    let home = tempfile::tempdir().unwrap();
    let home = home.path().to_str().unwrap().to_owned();
    let review = |number: u64| {
        let (cli, path, home) = (&cli, &path, &home);
        async move {
            cli.run_with(
                &["qa", "review", REPO, &number.to_string()],
                None,
                &[("PATH", path), ("HOME", home)],
            )
            .await
        }
    };
    let hook_reached_the_model = || {
        model
            .model_calls()
            .iter()
            .any(|call| call.body_text().contains(HOOK_SAYS))
    };

    let reviewed = review(from_the_fork).await;
    match backend {
        Backend::Local => {
            assert_eq!(reviewed.status.code(), Some(1), "{}", text(&reviewed));
            assert!(
                text(&reviewed).contains("would run code someone else wrote as you")
                    && text(&reviewed).contains("the PR comes from a fork"),
                "{}",
                text(&reviewed)
            );
            assert!(!host_marker.exists(), "the fork's hook ran on this machine");
            assert!(model.model_calls().is_empty(), "nothing started");
        }
        Backend::Docker => {
            let said = ok_text(&reviewed);
            assert!(said.contains("review posted"), "{said}");
            assert!(!model.model_calls().is_empty(), "the review ran");
            assert!(
                !hook_reached_the_model(),
                "the fork's SessionStart hook ran in the sandbox"
            );
            let log = ok_text(&cli.run(&["runs", "logs", "1"]).await);
            assert!(
                log.contains("starts with the tree's own agent configuration switched off"),
                "{log}"
            );
            assert!(!log.contains(HOOK_SAYS), "{log}");

            // The owner's own PR with the same hook: Claude Code runs it, so its
            // absence above is the switch's doing.
            fake.create_branch(REPO, "docs/own-note", "main");
            fake.push_commit(
                REPO,
                "docs/own-note",
                "My note, with my hook",
                &[
                    (".claude/settings.json", &settings),
                    ("docs/own.md", "Mine.\n"),
                ],
            );
            let own = fake.create_pull(REPO, OWNER, "docs/own-note", "My note");
            model.play_next(vec![
                ModelTurn::WriteOutput {
                    file: "output.md".to_owned(),
                    contents: "## Review\n\nFine.\n".to_owned(),
                },
                ModelTurn::Text("The review is written.".to_owned()),
            ]);
            ok_text(&review(own).await);
            assert!(
                hook_reached_the_model(),
                "the owner's own hook ran: Claude Code runs a tree's SessionStart hook"
            );
            asked_nothing_beyond_the_allow_list(&cli).await;
        }
    }
}
