//! The members of one settings object a host gave (camelCase, or the
//! snake_case a Python host uses), read against a table of known members
//! with one message per mistake: unknown, given twice, or of the wrong
//! type, each named as the host spelled it.

use serde_json::{Map, Value};

/// The members a host gave, by their camelCase name, each with the
/// spelling it used.
pub(crate) struct Given<'a> {
    pub(crate) members: Vec<(&'static str, &'a str, &'a Value)>,
    /// The table read: camelCase name, snake_case alias.
    table: &'static [(&'static str, &'static str)],
    snake_case: bool,
}

impl<'a> Given<'a> {
    /// Reads `map` against `table`; `noun` names a member in the errors
    /// ("client setting", "task setting").
    pub(crate) fn read(
        map: &'a Map<String, Value>,
        table: &'static [(&'static str, &'static str)],
        noun: &str,
    ) -> Result<Given<'a>, String> {
        let mut members = Vec::with_capacity(map.len());
        let mut snake_case = false;
        for (key, value) in map {
            let Some((camel, snake)) = table
                .iter()
                .find(|(camel, snake)| key == camel || key == snake)
            else {
                return Err(format!("unknown {noun} {key:?}"));
            };
            if members.iter().any(|(c, _, _)| c == camel) {
                return Err(format!("{noun} {camel:?} is given twice"));
            }
            snake_case |= key == snake && camel != snake;
            members.push((*camel, key.as_str(), value));
        }
        Ok(Given {
            members,
            table,
            snake_case,
        })
    }

    /// The member, `null` included.
    pub(crate) fn get(&self, camel: &'static str) -> Option<(&'a str, &'a Value)> {
        self.members
            .iter()
            .find(|(c, _, _)| *c == camel)
            .map(|(_, key, value)| (*key, *value))
    }

    /// The member unless absent or `null`.
    pub(crate) fn present(&self, camel: &'static str) -> Option<(&'a str, &'a Value)> {
        self.get(camel).filter(|(_, value)| !value.is_null())
    }

    pub(crate) fn string(&self, camel: &'static str) -> Result<Option<&'a str>, String> {
        self.present(camel)
            .map(|(key, value)| {
                value
                    .as_str()
                    .ok_or_else(|| format!("{key:?} must be a string, got {value}"))
            })
            .transpose()
    }

    /// A string that must be one of `choices`.
    pub(crate) fn one_of(
        &self,
        camel: &'static str,
        choices: &[&str],
    ) -> Result<Option<&'a str>, String> {
        let Some(text) = self.string(camel)? else {
            return Ok(None);
        };
        if choices.contains(&text) {
            return Ok(Some(text));
        }
        let mut quoted: Vec<String> = choices.iter().map(|c| format!("{c:?}")).collect();
        let last = quoted.pop().unwrap_or_default();
        Err(format!(
            "{:?} must be {} or {last}, not {text:?}",
            self.spelling(camel),
            quoted.join(", ")
        ))
    }

    /// How the host spells a member: as it gave it, else in the case it
    /// used for the others.
    pub(crate) fn spelling(&self, camel: &'static str) -> &'a str {
        if let Some((_, key, _)) = self.members.iter().find(|(c, _, _)| *c == camel) {
            return key;
        }
        match (
            self.snake_case,
            self.table.iter().find(|(c, _)| *c == camel),
        ) {
            (true, Some((_, snake))) => snake,
            _ => camel,
        }
    }
}
