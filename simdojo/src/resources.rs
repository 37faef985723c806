//! Shared resources: objects a whole simulation shares across components and partitions,
//! such as a GPU's memory, that are not themselves simulated components.
//!
//! A [`Resources`] map is keyed by type and name. The embedder may fill it before the
//! build (`SimConfig::resources`), components get or create entries while they are
//! built ([`crate::component::BuildContext::resource`]), and the embedder reaches them
//! afterwards ([`crate::engine::Simulation::resource`]).
//!
//! **Architecture Invariant:** a resource is touched by several worker threads at once.
//! The engine guarantees nothing about the order of those touches, so a model that wants
//! deterministic results must only share through a resource what does not depend on that
//! order (for example data written before it is read, with the hand-over carried by
//! messages) and must carry every ordering-sensitive interaction in messages.

use std::any::{Any, TypeId};
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

type Entry = Arc<dyn Any + Send + Sync>;

/// A typed, named map of shared objects. Cloning it shares the same map.
#[derive(Clone, Default)]
pub struct Resources {
    map: Arc<Mutex<BTreeMap<(String, TypeIdKey), Entry>>>,
}

/// `TypeId` with an order, for the map key.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Debug)]
struct TypeIdKey(TypeId);

impl std::fmt::Debug for Resources {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let names: Vec<String> = self.lock().keys().map(|(name, _)| name.clone()).collect();
        f.debug_struct("Resources").field("names", &names).finish()
    }
}

impl Resources {
    /// An empty map.
    pub fn new() -> Resources {
        Resources::default()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, BTreeMap<(String, TypeIdKey), Entry>> {
        // A poisoned lock only means a panic elsewhere while inserting; the map is
        // still consistent (insertions are single operations).
        self.map.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Stores `value` under `name`, replacing an earlier value of the same type and name.
    pub fn insert<T: Any + Send + Sync>(&self, name: &str, value: Arc<T>) {
        self.lock().insert((name.to_string(), TypeIdKey(TypeId::of::<T>())), value);
    }

    /// The value of type `T` under `name`, if any.
    pub fn get<T: Any + Send + Sync>(&self, name: &str) -> Option<Arc<T>> {
        let entry = self.lock().get(&(name.to_string(), TypeIdKey(TypeId::of::<T>())))?.clone();
        entry.downcast::<T>().ok()
    }

    /// The value of type `T` under `name`, created with `make` when there is none.
    pub fn get_or_insert_with<T: Any + Send + Sync>(&self, name: &str, make: impl FnOnce() -> T) -> Arc<T> {
        let mut map = self.lock();
        let key = (name.to_string(), TypeIdKey(TypeId::of::<T>()));
        if let Some(found) = map.get(&key).and_then(|e| e.clone().downcast::<T>().ok()) {
            return found;
        }
        let value = Arc::new(make());
        map.insert(key, value.clone());
        value
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn typed_and_named() {
        let r = Resources::new();
        let a = r.get_or_insert_with("gpu0", || 5u32);
        let b = r.get_or_insert_with("gpu0", || 7u32);
        assert!(Arc::ptr_eq(&a, &b));
        assert_eq!(*b, 5);
        assert!(r.get::<u64>("gpu0").is_none(), "same name, other type");
        assert!(r.get::<u32>("gpu1").is_none());
        let shared = r.clone();
        shared.insert("gpu1", Arc::new(9u32));
        assert_eq!(r.get::<u32>("gpu1").map(|v| *v), Some(9));
    }
}
