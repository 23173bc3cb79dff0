//! C aggregations from shared libraries: the ABI of `include/canopy_aggr.h`.

use super::{AggrError, AggrSpec, ErasedAggregation, decode, encode};
use crate::host::HostConfig;
use crate::value::{FileStat, Value};
use canopy_nodeset::RangeSet;
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::ffi::c_void;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};

const CANOPY_RAW: u32 = 0;
const CANOPY_AGGREGATED: u32 = 1;

#[repr(C)]
struct FileData {
    kind: u32,
    data: *const c_void,
    data_len: usize,
    files: *const u64,
    files_len: usize,
}

#[repr(C)]
struct Output {
    data: *mut c_void,
    data_len: usize,
}

#[repr(C)]
struct CStat {
    size: u64,
    nlink: u64,
    mtime: i64,
    mode: u32,
    uid: u32,
    gid: u32,
    mtime_nsec: u32,
}

type AggrFn = unsafe extern "C" fn(usize, *const FileData, *mut Output) -> i32;

/// The partial result of a C aggregation: its output bytes and the members they cover.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ForeignPartial {
    /// The function's output.
    pub data: Vec<u8>,
    /// The members whose results it aggregates.
    pub members: RangeSet,
}

/// A loaded C aggregation function.
pub(crate) struct Foreign {
    function: AggrFn,
    description: String,
    /// Keeps the code of `function` mapped; libraries are never unloaded.
    _library: libloading::Library,
}

type Loaded = Mutex<HashMap<(PathBuf, String), Arc<Foreign>>>;

/// Loads (once per process) `symbol` from the library at `path`.
pub(crate) fn load(path: &Path, symbol: &str) -> Result<Arc<Foreign>, AggrError> {
    static LOADED: OnceLock<Loaded> = OnceLock::new();
    let mut loaded = LOADED.get_or_init(Default::default).lock().unwrap_or_else(|e| e.into_inner());
    let key = (path.to_owned(), symbol.to_owned());
    if let Some(foreign) = loaded.get(&key) {
        return Ok(foreign.clone());
    }
    let description = format!("{}:{symbol}", path.display());
    // SAFETY: loading runs the library's initialisers; gloadaggr's contract is that the library is an
    // aggregation library written against canopy_aggr.h, as with MRNet filters.
    let library = unsafe { libloading::Library::new(path) }
        .map_err(|e| AggrError(format!("cannot load aggregation library {}: {e}", path.display())))?;
    // SAFETY: the symbol is declared with the canopy_aggr_fn signature of canopy_aggr.h.
    let function: AggrFn = unsafe { library.get::<AggrFn>(symbol.as_bytes()) }
        .map(|f| *f)
        .map_err(|e| AggrError(format!("{description}: {e}")))?;
    let foreign = Arc::new(Foreign { function, description, _library: library });
    loaded.insert(key, foreign.clone());
    Ok(foreign)
}

/// Loads the aggregation `function` from the shared library `library` (the paper's `gloadaggr`) and
/// returns the spec to bind with `gbindaggr`. Every host loads the same path when the aggregation first runs
/// there.
pub fn gloadaggr(library: impl AsRef<Path>, function: &str) -> Result<AggrSpec, AggrError> {
    let path = std::path::absolute(library.as_ref())
        .map_err(|e| AggrError(format!("{}: {e}", library.as_ref().display())))?;
    let Some(text) = path.to_str() else {
        return Err(AggrError(format!("{}: aggregation library paths must be UTF-8", path.display())));
    };
    load(&path, function)?;
    Ok(AggrSpec::Library { path: text.to_owned(), symbol: function.to_owned() })
}

/// One input: the bytes and member list it points to live as long as this value.
struct Input {
    kind: u32,
    data: Vec<u8>,
    files: Vec<u64>,
}

impl Foreign {
    fn call(&self, inputs: &[Input]) -> Result<Vec<u8>, AggrError> {
        let descriptors: Vec<FileData> = inputs
            .iter()
            .map(|input| FileData {
                kind: input.kind,
                data: input.data.as_ptr().cast(),
                data_len: input.data.len(),
                files: input.files.as_ptr(),
                files_len: input.files.len(),
            })
            .collect();
        let mut output = Output { data: std::ptr::null_mut(), data_len: 0 };
        // SAFETY: every pointer refers to memory owned by `inputs` / `descriptors`, alive for the call, with
        // the lengths given; the callee follows canopy_aggr.h.
        let status = unsafe { (self.function)(descriptors.len(), descriptors.as_ptr(), &mut output) };
        let data = if output.data.is_null() {
            Vec::new()
        } else {
            // SAFETY: canopy_aggr.h: a non-NULL output is a malloc()ed buffer of data_len bytes, ours to free.
            let copy =
                unsafe { std::slice::from_raw_parts(output.data.cast::<u8>(), output.data_len) }.to_vec();
            // SAFETY: allocated with malloc() by the callee, freed once here.
            unsafe { libc::free(output.data) };
            copy
        };
        if status != 0 {
            return Err(AggrError(format!("{} failed with status {status}", self.description)));
        }
        Ok(data)
    }
}

fn raw_bytes(value: &Value) -> Vec<u8> {
    match value {
        Value::Bytes(bytes) => bytes.clone(),
        Value::Int(status) => status.to_ne_bytes().to_vec(),
        Value::Stat(st) => stat_bytes(st),
    }
}

fn stat_bytes(st: &FileStat) -> Vec<u8> {
    let c = CStat {
        size: st.size,
        nlink: st.nlink,
        mtime: st.mtime,
        mode: st.mode,
        uid: st.uid,
        gid: st.gid,
        mtime_nsec: st.mtime_nsec,
    };
    // SAFETY: CStat is repr(C) plain data without padding (3 × 8 + 4 × 4 bytes).
    unsafe { std::slice::from_raw_parts((&c as *const CStat).cast::<u8>(), size_of::<CStat>()) }.to_vec()
}

impl ErasedAggregation for Foreign {
    fn leaves(&self, _host: &HostConfig, members: &[(u64, &Value)]) -> Result<Vec<u8>, AggrError> {
        let inputs: Vec<Input> = members
            .iter()
            .map(|&(member, value)| Input { kind: CANOPY_RAW, data: raw_bytes(value), files: vec![member] })
            .collect();
        let data = self.call(&inputs)?;
        encode(&ForeignPartial { data, members: RangeSet::from_values(members.iter().map(|&(m, _)| m)) })
    }

    fn merge(&self, parts: Vec<Vec<u8>>) -> Result<Vec<u8>, AggrError> {
        let partials: Vec<ForeignPartial> = parts.iter().map(|p| decode(p)).collect::<Result<_, _>>()?;
        let members = partials.iter().fold(RangeSet::new(), |acc, p| acc.union(&p.members));
        let inputs: Vec<Input> = partials
            .into_iter()
            .map(|p| Input { kind: CANOPY_AGGREGATED, files: p.members.values().collect(), data: p.data })
            .collect();
        let data = self.call(&inputs)?;
        encode(&ForeignPartial { data, members })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stat_layout_has_no_padding() {
        // Must match struct canopy_stat in include/canopy_aggr.h.
        assert_eq!(size_of::<CStat>(), 40);
    }
}
