//! Text lent to a C host: NUL-terminated copies of a call's or an approval's
//! id, tool name and arguments, made on first request and kept with the call
//! (`Call::binding_data`) or approval, so a pointer handed out stays valid as
//! long as the header promises: until the host completes the call (or the
//! registry is freed), until the approval is decided.

use std::sync::OnceLock;

use super::boundary::Fail;
use crate::exec::{Approval, Call};

/// The copies of one call or approval.
#[derive(Default)]
pub(crate) struct LentText {
    id: OnceLock<Box<[u8]>>,
    tool: OnceLock<Box<[u8]>>,
    arguments: OnceLock<Box<[u8]>>,
    input: OnceLock<Box<[u8]>>,
}

/// Which text.
#[derive(Clone, Copy)]
pub(crate) enum Field {
    Id,
    Tool,
    Arguments,
    /// A call's input (`capstan_call_input`); an approval has none.
    Input,
}

fn with_nul(mut bytes: Vec<u8>) -> Box<[u8]> {
    bytes.push(0);
    bytes.into_boxed_slice()
}

impl LentText {
    fn get(&self, field: Field, make: impl FnOnce() -> Vec<u8>) -> &[u8] {
        let slot = match field {
            Field::Id => &self.id,
            Field::Tool => &self.tool,
            Field::Arguments => &self.arguments,
            Field::Input => &self.input,
        };
        slot.get_or_init(|| with_nul(make()))
    }
}

fn no_slot() -> Fail {
    Fail::Core(crate::Error::Internal(
        "the call's binding data is not the C ABI's".into(),
    ))
}

/// `field` of `call`, NUL-terminated (the NUL not part of the text).
pub(crate) fn call_text(call: &Call, field: Field) -> Result<&[u8], Fail> {
    let lent = call.binding_data(LentText::default).ok_or_else(no_slot)?;
    Ok(lent.get(field, || match field {
        Field::Id => call.id().as_bytes().to_vec(),
        Field::Tool => call.tool().as_bytes().to_vec(),
        Field::Arguments => serde_json::to_vec(call.arguments()).unwrap_or_default(),
        Field::Input => {
            serde_json::to_vec(&call.input().unwrap_or_default().to_json()).unwrap_or_default()
        }
    }))
}

/// `field` of `approval`, NUL-terminated.
pub(crate) fn approval_text(approval: &Approval, field: Field) -> Result<&[u8], Fail> {
    let lent = approval
        .binding_data(LentText::default)
        .ok_or_else(no_slot)?;
    Ok(lent.get(field, || {
        let text = match field {
            Field::Id => approval.id(),
            Field::Tool => approval.tool(),
            Field::Arguments | Field::Input => approval.arguments_text(),
        };
        text.as_bytes().to_vec()
    }))
}
