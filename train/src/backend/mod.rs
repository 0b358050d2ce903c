//! Training engines written by hand for speed (Burn's autodiff is the other engine, in
//! [`crate::training`]).

pub mod cpu;
