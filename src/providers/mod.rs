//! Provider formats (placeholder until written).
