//! The runtime layer: the agent's lifecycle and what it runs on (settings,
//! services). It uses the agent, the network and the kernel below it.

pub mod settings;
