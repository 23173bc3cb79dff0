//! Serde forms of values that travel between the processes of a distributed walk, for fields
//! whose types serde does not take as they are (`#[serde(with = "…")]`).

/// An `Arc<T>` as its value; the receiving process gets its own.
pub mod shared {
    use serde::{Deserialize, Deserializer, Serialize, Serializer};
    use std::sync::Arc;

    pub fn serialize<T: Serialize, S: Serializer>(value: &Arc<T>, serializer: S) -> Result<S::Ok, S::Error> {
        T::serialize(value, serializer)
    }

    pub fn deserialize<'de, T: Deserialize<'de>, D: Deserializer<'de>>(
        deserializer: D,
    ) -> Result<Arc<T>, D::Error> {
        T::deserialize(deserializer).map(Arc::new)
    }
}

/// A `Result<Arc<T>, Errno>` (the outcome of an operation another process waits on), the error
/// as its number.
pub mod shared_outcome {
    use canopy_engine::Errno;
    use serde::{Deserialize, Deserializer, Serialize, Serializer};
    use std::sync::Arc;

    pub fn serialize<T: Serialize, S: Serializer>(
        value: &Result<Arc<T>, Errno>,
        serializer: S,
    ) -> Result<S::Ok, S::Error> {
        value.as_ref().map(|v| &**v).map_err(|e| e.raw_os_error()).serialize(serializer)
    }

    pub fn deserialize<'de, T: Deserialize<'de>, D: Deserializer<'de>>(
        deserializer: D,
    ) -> Result<Result<Arc<T>, Errno>, D::Error> {
        let outcome = Result::<T, i32>::deserialize(deserializer)?;
        Ok(outcome.map(Arc::new).map_err(Errno::from_raw_os_error))
    }
}

/// An `Option<Arc<T>>` as an optional value.
pub mod shared_option {
    use serde::{Deserialize, Deserializer, Serialize, Serializer};
    use std::sync::Arc;

    pub fn serialize<T: Serialize, S: Serializer>(
        value: &Option<Arc<T>>,
        serializer: S,
    ) -> Result<S::Ok, S::Error> {
        value.as_deref().serialize(serializer)
    }

    pub fn deserialize<'de, T: Deserialize<'de>, D: Deserializer<'de>>(
        deserializer: D,
    ) -> Result<Option<Arc<T>>, D::Error> {
        Ok(Option::<T>::deserialize(deserializer)?.map(Arc::new))
    }
}
