//! webclient 2.x over real TCP for the host port (see issue: streamed chat).
