//! The dry-run listing: one line per change a run would make, `VERB PATH` with the destination path
//! (`create`, `replace`, `attrs`, `link PATH => FIRST`, `mkdir`).

use canopy_engine::output::{OutBuf, Sink};
use std::sync::Arc;

pub fn line(out: &mut Option<OutBuf>, verb: &str, path: &[u8], link_to: Option<&[u8]>) {
    let Some(out) = out else { return };
    let buf = out.buf();
    buf.extend_from_slice(verb.as_bytes());
    buf.push(b' ');
    buf.extend_from_slice(path);
    if let Some(first) = link_to {
        buf.extend_from_slice(b" => ");
        buf.extend_from_slice(first);
    }
    buf.push(b'\n');
    out.end_record();
}

pub fn buffer(sink: &Option<Arc<Sink>>) -> Option<OutBuf> {
    sink.as_ref().map(|s| OutBuf::new(Arc::clone(s)))
}
