//! Resolving an [`AggrSpec`] to a runnable aggregation on each rank.

use super::builtin::{Average, Checksum, Concat, Equal, Equivalence, Max, Min, Sum, Zero};
use super::{AggrError, AggrSpec, Aggregation, Builtin, ErasedAggregation, Typed, foreign};
use std::collections::HashMap;
use std::sync::Arc;

type Factory = Arc<dyn Fn(&str) -> Result<Arc<dyn ErasedAggregation>, String> + Send + Sync>;

/// The Rust aggregations a program can bind by name, besides the built-ins and C libraries.
///
/// Every rank must register the same names (under MPI each process builds its registry at start-up, before
/// serving), because a request names its aggregation and each rank builds it locally.
#[derive(Clone, Default)]
pub struct Registry {
    factories: HashMap<String, Factory>,
}

impl Registry {
    /// A registry with no Rust aggregations (built-ins and C libraries need none).
    pub fn new() -> Self {
        Self::default()
    }

    /// Registers `name`; `factory` builds the aggregation from the parameters given to
    /// [`AggrSpec::Registered`] (and may reject them with a message).
    pub fn register<A, F>(&mut self, name: &str, factory: F)
    where
        A: Aggregation,
        F: Fn(&str) -> Result<A, String> + Send + Sync + 'static,
    {
        let erased: Factory = Arc::new(move |params: &str| {
            factory(params).map(|aggregation| Arc::new(Typed(aggregation)) as Arc<dyn ErasedAggregation>)
        });
        self.factories.insert(name.to_owned(), erased);
    }

    pub(crate) fn resolve(&self, spec: &AggrSpec) -> Result<Arc<dyn ErasedAggregation>, AggrError> {
        match spec {
            AggrSpec::Builtin(builtin) => Ok(builtin_aggregation(*builtin)),
            AggrSpec::Registered { name, params } => {
                let factory = self
                    .factories
                    .get(name)
                    .ok_or_else(|| AggrError(format!("no aggregation is registered as {name:?}")))?;
                factory(params).map_err(|e| AggrError(format!("aggregation {name:?}: {e}")))
            }
            AggrSpec::Library { path, symbol } => {
                Ok(foreign::load(path.as_ref(), symbol)? as Arc<dyn ErasedAggregation>)
            }
        }
    }
}

fn builtin_aggregation(builtin: Builtin) -> Arc<dyn ErasedAggregation> {
    match builtin {
        Builtin::Sum => Arc::new(Typed(Sum)),
        Builtin::Min => Arc::new(Typed(Min)),
        Builtin::Max => Arc::new(Typed(Max)),
        Builtin::Average => Arc::new(Typed(Average)),
        Builtin::Equal => Arc::new(Typed(Equal)),
        Builtin::Zero => Arc::new(Typed(Zero)),
        Builtin::Concat => Arc::new(Typed(Concat)),
        Builtin::Classes => Arc::new(Typed(Equivalence)),
        Builtin::Checksum => Arc::new(Typed(Checksum)),
    }
}
