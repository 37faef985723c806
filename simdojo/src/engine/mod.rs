//! The engine: runs a built topology's components over partitions and worker threads.

/// What a component sees while it handles an event (work in progress).
pub struct Context<'a> {
    _p: std::marker::PhantomData<&'a mut ()>,
}
