//! The native `LoadedSkill` class: core's [`LoadedSkill`] for Node, a
//! skill (SEP-2640) whose `SKILL.md` core read and checked against its
//! entry; its other files are read one at a time, each checked too.

use ferromcp::client::LoadedSkill;
use napi::Env;
use napi::bindgen_prelude::{Buffer, Object};
use napi_derive::napi;
use serde_json::Value;

use crate::runtime::spawn;

/// A loaded skill. Use the facade's `client.loadSkill(...)`.
///
/// @example
/// ```js
/// const skill = await native.loadSkill("skill://git-workflow/SKILL.md");
/// console.log(skill.skillMd, (await skill.read("references/HOOKS.md")).toString());
/// ```
#[napi(js_name = "LoadedSkill")]
pub struct JsLoadedSkill {
    pub(crate) loaded: LoadedSkill,
}

#[napi]
impl JsLoadedSkill {
    /// The entry the skill was loaded from.
    #[napi(getter, ts_return_type = "any")]
    pub fn skill(&self) -> napi::Result<Value> {
        serde_json::to_value(&self.loaded.skill)
            .map_err(|e| napi::Error::from_reason(e.to_string()))
    }

    /// The `SKILL.md` text, frontmatter included.
    #[napi(getter)]
    pub fn skill_md(&self) -> String {
        self.loaded.skill_md.clone()
    }

    /// Reads one file of the skill (a path inside it, or its URI), checked
    /// against the entry.
    #[napi(ts_return_type = "Promise<Buffer>")]
    pub fn read<'env>(&self, env: &'env Env, file: String) -> napi::Result<Object<'env>> {
        let loaded = self.loaded.clone();
        spawn(env, async move { loaded.read(&file).await }, |bytes| {
            Ok(Buffer::from(bytes))
        })
    }
}
