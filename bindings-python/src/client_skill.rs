//! `ferromcp._native.LoadedSkill`: core's [`LoadedSkill`] for Python, a
//! skill (SEP-2640) whose `SKILL.md` core read and checked against its
//! entry; its other files are read one at a time, each checked too.

use pyo3::prelude::*;
use pyo3::types::PyBytes;

use ferromcp::client::LoadedSkill;

use crate::client_future;
use crate::values;

#[pyclass(module = "ferromcp._native", name = "LoadedSkill", frozen)]
pub(crate) struct PyLoadedSkill {
    pub(crate) loaded: LoadedSkill,
}

#[pymethods]
impl PyLoadedSkill {
    /// The entry the skill was loaded from, as the server sent it.
    #[getter]
    fn skill(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        Ok(values::to_python(py, &self.loaded.skill)?.unbind())
    }

    /// The `SKILL.md` text, frontmatter included.
    #[getter]
    fn skill_md(&self) -> &str {
        &self.loaded.skill_md
    }

    /// Reads one file of the skill (a path inside it, or its URI), checked
    /// against the entry; answers with its bytes.
    fn read(
        &self,
        py: Python<'_>,
        file: String,
        event_loop: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Py<PyAny>> {
        let loaded = self.loaded.clone();
        client_future::run(
            py,
            event_loop,
            async move { loaded.read(&file).await },
            Box::new(|py, bytes: Vec<u8>| Ok(PyBytes::new(py, &bytes).into_any().unbind())),
        )
    }

    fn __repr__(&self) -> String {
        format!("<ferromcp._native.LoadedSkill {}>", self.loaded.skill.uri)
    }
}
