//! A sans-IO TCP model for the lab (being written).
