//! Schemas (placeholder until written).
