//! Rendering: JSON shapes, text explanations (and, later, pictures).

pub mod json;
pub mod cycle;
