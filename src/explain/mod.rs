//! Rendering: JSON shapes, text explanations (and, later, pictures).

pub mod anomaly;
pub mod cycle;
pub mod json;
pub mod proof;
