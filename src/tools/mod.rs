//! The tool registry: one ordered list of every tool gitward serves.
//!
//! A tool is a unit struct implementing [`Tool`]: its name, title, description, typed
//! input and output (JSON Schemas are derived from the types), annotations and an async
//! `call`. [`ALL`] lists them in the order `tools/list` shows them; adding a tool means
//! writing it in its own file, named after it, and adding one line there.

pub mod agents;
pub mod commit;
pub mod conflict;
pub mod diff;
pub mod fleet;
pub mod flux;
pub mod input;
pub mod literal_path;
pub mod operation;
pub mod repo;
pub mod safety;
pub mod schema;
pub mod specs;
pub mod submodule;
pub mod worktree;

use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, LazyLock, OnceLock};

use schemars::JsonSchema;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;
use serde_json::value::RawValue;

use crate::config::{Config, Toolset};
use crate::error::ToolError;
use crate::model::tool_name::{self, Style};
use crate::process::CancellationToken;
pub use crate::progress::Progress;

pub use crate::observe::ClientInfo;

/// Everything a tool call may use besides its arguments.
#[derive(Clone)]
pub struct CallCtx {
    pub config: Arc<Config>,
    /// Fires when the client cancels the request; running git processes are killed.
    pub cancel: CancellationToken,
    pub client: ClientInfo,
    /// How far the call has come, for a client that asked or a terminal; a no-op when
    /// nobody watches.
    pub progress: Progress,
}

/// The behaviour hints MCP hosts read. They describe effects, they do not authorize.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Annotations {
    pub read_only: bool,
    pub destructive: bool,
    pub idempotent: bool,
    pub open_world: bool,
}

impl Annotations {
    /// A local read: no effects, same answer for the same repository state.
    pub const READ: Annotations = Annotations {
        read_only: true,
        destructive: false,
        idempotent: true,
        open_world: false,
    };

    /// The hints as `tools/list` shows them. MCP gives `destructiveHint` and
    /// `idempotentHint` meaning only where `readOnlyHint` is false, so a read-only tool
    /// leaves them out: every host sends the whole list to the model each session.
    pub fn to_json(self) -> Value {
        if self.read_only {
            return serde_json::json!({
                "readOnlyHint": true,
                "openWorldHint": self.open_world,
            });
        }
        serde_json::json!({
            "readOnlyHint": false,
            "destructiveHint": self.destructive,
            "idempotentHint": self.idempotent,
            "openWorldHint": self.open_world,
        })
    }
}

/// One tool, typed.
pub trait Tool: Send + Sync + 'static {
    type Input: DeserializeOwned + JsonSchema + Send + 'static;
    type Output: Serialize + JsonSchema + Send + 'static;

    const NAME: &'static str;
    const TITLE: &'static str;
    const DESCRIPTION: &'static str;
    const TOOLSET: Toolset;
    const ANNOTATIONS: Annotations;

    fn call(
        ctx: CallCtx,
        input: Self::Input,
    ) -> impl Future<Output = Result<Self::Output, ToolError>> + Send;

    /// The text content block when it is not the compact JSON of the structured result
    /// (the spec tools wrap their state in an instruction the caller may switch off).
    fn text_of(_output: &Self::Output) -> Option<String> {
        None
    }
}

/// A finished call: the structured result, serialized once, and its text block.
pub struct Rendered {
    pub structured: Box<RawValue>,
    /// `None` when the text block is the structured result's JSON itself, so the same
    /// bytes serve both without a copy.
    pub text: Option<String>,
}

impl Rendered {
    /// The text content block.
    pub fn text(&self) -> &str {
        self.text.as_deref().unwrap_or(self.structured.get())
    }
}

/// A call in flight: its rendered result, or the failure.
pub type Invoked = Pin<Box<dyn Future<Output = Result<Rendered, ToolError>> + Send>>;

/// Runs one call. A closure, so a tool built at start-up from data (one preview tool per
/// operation type) can keep what it was built from.
pub type Invoke = Box<dyn Fn(CallCtx, Value) -> Invoked + Send + Sync>;

/// A tool's input and output schemas, as `tools/list` shows them.
pub struct Schemas {
    pub input: Value,
    pub output: Value,
}

/// Builds a tool's schemas when `tools/list` first needs them: deriving them is most of
/// what building the registry costs, and `initialize` must not wait for it.
pub type BuildSchemas = Box<dyn Fn() -> Schemas + Send + Sync>;

/// What `tools/list` shows of a tool built with [`ToolDef::dynamic`].
pub struct About {
    pub name: &'static str,
    pub title: &'static str,
    pub description: &'static str,
    pub toolset: Toolset,
    pub annotations: Annotations,
    pub schemas: BuildSchemas,
}

/// A tool with its types erased, as the registry keeps it.
pub struct ToolDef {
    pub name: &'static str,
    pub title: &'static str,
    pub description: &'static str,
    pub toolset: Toolset,
    pub annotations: Annotations,
    schemas: OnceLock<Schemas>,
    build_schemas: BuildSchemas,
    invoke: Invoke,
}

impl ToolDef {
    pub fn of<T: Tool>() -> ToolDef {
        ToolDef {
            name: T::NAME,
            title: T::TITLE,
            description: T::DESCRIPTION,
            toolset: T::TOOLSET,
            annotations: T::ANNOTATIONS,
            schemas: OnceLock::new(),
            build_schemas: Box::new(|| Schemas {
                input: input::schema_of::<T::Input>(),
                output: input::output_schema_of::<T::Output>(),
            }),
            invoke: Box::new(|ctx, args| {
                Box::pin(async move {
                    let input = input::parse::<T::Input>(args)?;
                    let output = T::call(ctx, input).await?;
                    Ok(Rendered {
                        structured: raw(&output)?,
                        text: T::text_of(&output),
                    })
                })
            }),
        }
    }

    /// A tool described by data rather than a type: `invoke` parses its own arguments,
    /// and its text block is the compact JSON of the structured result.
    pub fn dynamic(about: About, invoke: Invoke) -> ToolDef {
        ToolDef {
            name: about.name,
            title: about.title,
            description: about.description,
            toolset: about.toolset,
            annotations: about.annotations,
            schemas: OnceLock::new(),
            build_schemas: about.schemas,
            invoke,
        }
    }

    pub fn input_schema(&self) -> &Value {
        &self.schemas().input
    }

    pub fn output_schema(&self) -> &Value {
        &self.schemas().output
    }

    fn schemas(&self) -> &Schemas {
        self.schemas.get_or_init(&self.build_schemas)
    }

    /// Validates the arguments, runs the tool, and renders its result.
    pub async fn call_rendered(&self, ctx: CallCtx, args: Value) -> Result<Rendered, ToolError> {
        (self.invoke)(ctx, args).await
    }

    /// The payload of a failed call, as the agent sees it: `tool` is the identity, and
    /// the texts name tools as they are served.
    pub fn error_payload(&self, error: &ToolError) -> Value {
        let mut data = error.data.clone();
        // A `tool` in the data names a tool by its identity, as the payload's own does.
        match &mut data {
            Value::Object(fields) => fields
                .iter_mut()
                .filter(|(key, _)| key.as_str() != "tool")
                .for_each(|(_, value)| tool_name::prose_value(value)),
            other => tool_name::prose_value(other),
        }
        serde_json::json!({
            "tool": self.name,
            "readOnly": self.annotations.read_only,
            "error": { "code": error.code, "message": tool_name::prose(&error.message), "data": data },
        })
    }
}

/// The compact JSON of a tool's output, written straight from its type: the same bytes
/// `serde_json::to_value` and then [`compact`] would give (object keys keep their order),
/// without the tree in between.
pub fn raw<T: Serialize>(output: &T) -> Result<Box<RawValue>, ToolError> {
    serde_json::value::to_raw_value(output).map_err(|e| ToolError::internal(e.to_string()))
}

/// The compact JSON of `value`, as its `Display` writes it, without going through a
/// formatter one fragment at a time.
pub fn compact(value: &Value) -> String {
    // Writing a `Value` into a string cannot fail; the fallback only keeps this total.
    serde_json::to_string(value).unwrap_or_else(|_| value.to_string())
}

/// Every tool, in `tools/list` order.
pub static ALL: LazyLock<Vec<ToolDef>> = LazyLock::new(|| {
    let mut all = vec![
        ToolDef::of::<repo::brief::Brief>(),
        ToolDef::of::<repo::scope::Scope>(),
        ToolDef::of::<repo::status::Status>(),
        ToolDef::of::<repo::refs::Refs>(),
        ToolDef::of::<repo::branch_stack::BranchStack>(),
        ToolDef::of::<repo::history::History>(),
        ToolDef::of::<repo::reflog::Reflog>(),
        ToolDef::of::<repo::conflict_preflight::Preflight>(),
        ToolDef::of::<conflict::read::Read>(),
        ToolDef::of::<commit::details::Details>(),
        ToolDef::of::<worktree::changes::Changes>(),
        ToolDef::of::<worktree::list::WorktreeList>(),
        ToolDef::of::<submodule::status::Status>(),
        ToolDef::of::<diff::text::DiffText>(),
        ToolDef::of::<diff::semantic::Semantic>(),
        ToolDef::of::<diff::semantic_fallbacks::Fallbacks>(),
        ToolDef::of::<fleet::radar::Radar>(),
        ToolDef::of::<fleet::digest::Digest>(),
        ToolDef::of::<agents::presence::Presence>(),
        ToolDef::of::<safety::timeline::Timeline>(),
        ToolDef::of::<safety::event_details::EventDetails>(),
        ToolDef::of::<flux::latest_restore_point::LatestRestorePoint>(),
        ToolDef::of::<flux::restore_points::RestorePoints>(),
        ToolDef::of::<flux::restore_point_details::RestorePointDetails>(),
        ToolDef::of::<operation::status::OperationStatus>(),
    ];
    all.extend(operation::preview::tools());
    all.push(ToolDef::of::<operation::cancel::OperationCancel>());
    all.extend([
        ToolDef::of::<specs::Explore>(),
        ToolDef::of::<specs::CreatePlan>(),
        ToolDef::of::<specs::CreateProposal>(),
        ToolDef::of::<specs::ApplyChange>(),
        ToolDef::of::<specs::ArchiveChange>(),
    ]);
    all
});

/// The tools this configuration serves, in order.
pub fn visible(config: &Config) -> impl Iterator<Item = &'static ToolDef> + '_ {
    ALL.iter()
        .filter(|t| config.has(t.toolset))
        .filter(|t| !config.read_only || t.annotations.read_only)
}

/// A served tool by either of its names: the seed's dotted one, its identity, or the
/// safe one every host accepts (see [`crate::model::tool_name`]), whichever is listed.
pub fn find(config: &Config, name: &str) -> Option<&'static ToolDef> {
    visible(config).find(|t| t.name == name || tool_name::served_in(Style::Safe, t.name) == name)
}

/// The result envelope of a local read: `{tool, readOnly, source, repoPath, data}`.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Local<D> {
    pub tool: &'static str,
    pub read_only: bool,
    /// Always `local-git`: computed from the local repository by git.
    pub source: &'static str,
    /// The canonical top level of the repository (its git directory when bare).
    pub repo_path: String,
    /// Present when the repository (or a submodule) defines filter drivers that gitward
    /// did not run: files they apply to may show as modified where git, running them,
    /// sees none. `GITWARD_TRUSTED_DRIVERS` names drivers that may run.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub disarmed_filters: Vec<String>,
    pub data: D,
}

impl<D> Local<D> {
    pub fn new<T: Tool>(repo: &crate::git::Repo, data: D) -> Local<D> {
        Local {
            tool: T::NAME,
            read_only: true,
            source: "local-git",
            repo_path: repo.display(),
            disarmed_filters: repo.disarmed_filters(),
            data,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_name_is_renamed_by_the_naming_rule_and_both_names_find_one_tool() {
        let config = Config::default();
        let mut safe: Vec<String> = Vec::new();
        for tool in ALL.iter() {
            let served = tool_name::served_in(Style::Safe, tool.name);
            // A dotted name the rule misses would be listed as it is, which hosts refuse.
            assert!(
                served
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-'),
                "{served}"
            );
            assert_eq!(find(&config, tool.name).map(|t| t.name), Some(tool.name));
            assert_eq!(find(&config, &served).map(|t| t.name), Some(tool.name));
            safe.push(served.into_owned());
        }
        safe.sort_unstable();
        safe.dedup();
        assert_eq!(safe.len(), ALL.len());
        assert!(find(&config, "repo_nothing").is_none());
    }

    #[test]
    fn names_are_unique_and_schemas_are_closed_objects() {
        let mut names: Vec<_> = ALL.iter().map(|t| t.name).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), ALL.len());
        for tool in ALL.iter() {
            assert_eq!(tool.input_schema()["type"], "object", "{}", tool.name);
            assert_eq!(
                tool.input_schema()["additionalProperties"],
                false,
                "{}",
                tool.name
            );
            assert_eq!(tool.output_schema()["type"], "object", "{}", tool.name);
        }
    }

    /// Every `format` keyword in `schema`, wherever it sits.
    fn formats(schema: &Value, out: &mut Vec<String>) {
        match schema {
            Value::Object(obj) => {
                for (key, value) in obj {
                    match (key.as_str(), value) {
                        ("format", Value::String(f)) => out.push(f.clone()),
                        _ => formats(value, out),
                    }
                }
            }
            Value::Array(items) => items.iter().for_each(|v| formats(v, out)),
            _ => {}
        }
    }

    #[test]
    fn schemas_use_only_standard_formats_and_keep_integer_bounds() {
        for tool in ALL.iter() {
            let mut found = Vec::new();
            formats(tool.input_schema(), &mut found);
            formats(tool.output_schema(), &mut found);
            found.retain(|f| !input::STANDARD_FORMATS.contains(&f.as_str()));
            assert!(found.is_empty(), "{}: {found:?}", tool.name);
        }
        let status = ALL.iter().find(|t| t.name == "repo.status").unwrap();
        let schema = status.output_schema();
        let resolve = |s: &Value| -> Value {
            match s["$ref"].as_str().and_then(|r| r.strip_prefix("#/$defs/")) {
                Some(name) => schema["$defs"][name].clone(),
                None => s.clone(),
            }
        };
        let data = resolve(&schema["properties"]["data"]);
        let ahead = resolve(&data["properties"]["ahead"]);
        assert_eq!(ahead["minimum"], 0, "{ahead}");
        let brief = ALL.iter().find(|t| t.name == "repo.brief").unwrap();
        let commits = &brief.input_schema()["properties"]["recentCommits"];
        assert_eq!(
            (&commits["minimum"], &commits["maximum"]),
            (&1.into(), &20.into())
        );
    }

    #[test]
    fn annotations_come_from_the_risk_table_and_only_proposals_write() {
        use crate::operation::risk;
        let mut writes = Vec::new();
        for tool in ALL.iter().filter(|t| t.toolset != Toolset::Specs) {
            let a = tool.annotations;
            if let Some(kind) = tool.name.strip_prefix("operation.preview.") {
                assert!(!a.read_only, "{}", tool.name);
                assert_eq!(a.destructive, risk::destructive(kind), "{}", tool.name);
                writes.push(tool.name);
            } else if tool.name == "operation.cancel" {
                assert!(!a.read_only && !a.destructive);
                writes.push(tool.name);
            } else {
                assert!(
                    a.read_only && !a.destructive && !a.open_world,
                    "{}",
                    tool.name
                );
            }
        }
        // `--read-only` hides exactly the proposals and the cancellation.
        let config = Config {
            read_only: true,
            ..Config::default()
        };
        let hidden: Vec<_> = ALL
            .iter()
            .filter(|t| t.toolset != Toolset::Specs)
            .filter(|t| !visible(&config).any(|v| v.name == t.name))
            .map(|t| t.name)
            .collect();
        assert_eq!(hidden, writes);
        assert_eq!(writes.len(), crate::operation::ALL.len() + 1);
        // The `git` toolset alone serves no write tool; `ops` alone only those and status.
        let git = Config {
            toolsets: vec![Toolset::Git],
            ..Config::default()
        };
        assert!(visible(&git).all(|t| t.annotations.read_only));
        let ops = Config {
            toolsets: vec![Toolset::Ops],
            ..Config::default()
        };
        let ops: Vec<_> = visible(&ops).map(|t| t.name).collect();
        assert_eq!(ops.len(), writes.len() + 1, "{ops:?}");
        assert!(ops.contains(&"operation.status"));
    }

    #[test]
    fn semantic_data_has_a_real_schema() {
        for name in ["diff.semantic", "diff.semanticFallbacks"] {
            let tool = ALL.iter().find(|t| t.name == name).unwrap();
            let data = &tool.output_schema()["properties"]["data"];
            assert_eq!(data["type"], "object", "{name}: {data}");
            assert_eq!(data["properties"]["supported"]["type"], "boolean", "{name}");
        }
    }
}
