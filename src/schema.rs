//! Temporary stand-in until the schema module lands.
use crate::error::Error;
use serde_json::Value;
pub struct Schema {
    source: Value,
    validator: jsonschema::Validator,
}
#[derive(Debug, Clone, PartialEq)]
pub struct ArgumentError {
    pub pointer: String,
    pub message: String,
}
#[derive(Debug, Clone, PartialEq)]
pub struct ArgumentErrors(pub Vec<ArgumentError>);
impl std::fmt::Display for ArgumentErrors {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Invalid arguments:")?;
        for e in &self.0 {
            write!(f, "\n- {}: {}", e.pointer, e.message)?;
        }
        Ok(())
    }
}
impl Schema {
    pub fn compile(p: &Value) -> Result<Schema, Error> {
        let validator =
            jsonschema::validator_for(p).map_err(|e| Error::InvalidSchema(e.to_string()))?;
        Ok(Schema {
            source: p.clone(),
            validator,
        })
    }
    pub fn source(&self) -> &Value {
        &self.source
    }
    pub fn validate(&self, args: Value, _coerce: bool) -> Result<Value, ArgumentErrors> {
        if self.validator.is_valid(&args) {
            return Ok(args);
        }
        Err(ArgumentErrors(
            self.validator
                .iter_errors(&args)
                .map(|e| ArgumentError {
                    pointer: e.instance_path().to_string(),
                    message: e.to_string(),
                })
                .collect(),
        ))
    }
}
