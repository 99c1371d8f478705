//! How the bench writes quantities, shared by the report and the engines' own lines.

/// Bytes as MB with one decimal.
pub fn mb(bytes: u64) -> String {
    format!("{:.1} MB", bytes as f64 / 1048576.0)
}
