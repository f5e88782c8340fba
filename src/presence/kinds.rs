//! The coding agents gitward recognises, and every way it recognises each.

/// One kind of coding agent and every way we recognise it. Adding an agent means adding
/// a row here (and, for a session store, a reader in `stores`).
pub struct Detector {
    /// The `agent` value reported.
    pub id: &'static str,
    /// Executable, `argv[0]` or interpreter-script basenames.
    pub names: &'static [&'static str],
    /// Path fragments of an interpreter script or an executable that identify the agent.
    pub markers: &'static [&'static str],
    /// Lower-case fragments of MCP `clientInfo.name` values this agent declares.
    pub clients: &'static [&'static str],
    /// Files the agent writes in the repository root while it works (mtime only).
    pub activity_files: &'static [&'static str],
    /// An editor with a built-in agent rather than an agent of its own.
    pub editor: bool,
}

pub const DETECTORS: &[Detector] = &[
    Detector {
        id: "claude-code",
        names: &["claude"],
        markers: &["@anthropic-ai/claude-code/", "/claude/versions/"],
        clients: &["claude"],
        activity_files: &[],
        editor: false,
    },
    Detector {
        id: "codex",
        names: &["codex"],
        markers: &["@openai/codex/"],
        clients: &["codex"],
        activity_files: &[],
        editor: false,
    },
    Detector {
        id: "gemini-cli",
        names: &["gemini"],
        markers: &["@google/gemini-cli/"],
        clients: &["gemini"],
        activity_files: &[],
        editor: false,
    },
    Detector {
        id: "aider",
        names: &["aider"],
        markers: &["/site-packages/aider/"],
        clients: &["aider"],
        activity_files: &[".aider.chat.history.md", ".aider.input.history"],
        editor: false,
    },
    Detector {
        id: "opencode",
        names: &["opencode"],
        markers: &["/opencode-ai/"],
        clients: &["opencode"],
        activity_files: &[],
        editor: false,
    },
    Detector {
        id: "cursor-agent",
        names: &["cursor-agent"],
        markers: &["/cursor-agent/"],
        clients: &["cursor-agent"],
        activity_files: &[],
        editor: false,
    },
    Detector {
        id: "copilot-cli",
        names: &["copilot"],
        markers: &["@github/copilot/"],
        clients: &["copilot-cli", "github-copilot-cli"],
        activity_files: &[],
        editor: false,
    },
    Detector {
        id: "goose",
        names: &["goose", "goosed"],
        markers: &[],
        clients: &["goose"],
        activity_files: &[],
        editor: false,
    },
    Detector {
        id: "amp",
        names: &["amp"],
        markers: &["@sourcegraph/amp/"],
        clients: &["amp"],
        activity_files: &[],
        editor: false,
    },
    Detector {
        id: "cline",
        names: &["cline"],
        markers: &["/cline/cli/"],
        clients: &["cline"],
        activity_files: &[],
        editor: false,
    },
    Detector {
        id: "roo-code",
        names: &[],
        markers: &[],
        clients: &["roo-code", "roo code", "zoo-code", "zoo code"],
        activity_files: &[],
        editor: false,
    },
    Detector {
        id: "kilo-code",
        names: &[],
        markers: &[],
        clients: &["kilo-code", "kilo code"],
        activity_files: &[],
        editor: false,
    },
    Detector {
        id: "continue",
        names: &[],
        markers: &[],
        clients: &["continue"],
        activity_files: &[],
        editor: false,
    },
    Detector {
        id: "cursor",
        names: &["cursor"],
        markers: &["/cursor.appimage", "/Cursor.app/"],
        clients: &["cursor"],
        activity_files: &[],
        editor: true,
    },
    Detector {
        id: "windsurf",
        names: &["windsurf"],
        markers: &["/Windsurf.app/"],
        clients: &["windsurf"],
        activity_files: &[],
        editor: true,
    },
    Detector {
        id: "vscode-copilot",
        names: &[],
        markers: &[],
        clients: &["visual studio code", "vscode", "copilot"],
        activity_files: &[],
        editor: true,
    },
];

/// The agent kind a declared MCP client name stands for, if any.
pub fn agent_for_client(name: &str) -> Option<&'static str> {
    let name = name.to_ascii_lowercase();
    // Longest fragment first, so `cursor-agent` wins over `cursor`.
    DETECTORS
        .iter()
        .flat_map(|d| d.clients.iter().map(move |c| (d.id, *c)))
        .filter(|(_, c)| name.contains(c))
        .min_by_key(|(_, c)| std::cmp::Reverse(c.len()))
        .map(|(id, _)| id)
}
