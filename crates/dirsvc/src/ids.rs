//! Object ids: the top 16 bits name the server that allocated the id (and, for a directory, holds
//! its metadata object); the low 48 bits count up on that server.

pub const ROOT_ID: u64 = 1;
const SEQ_BITS: u32 = 48;

pub fn make_id(server: u32, seq: u64) -> u64 {
    (u64::from(server) << SEQ_BITS) | (seq & ((1 << SEQ_BITS) - 1))
}

/// The server holding the metadata object of directory `id`.
pub fn home_server(id: u64) -> u32 {
    (id >> SEQ_BITS) as u32
}

pub fn now_ns() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos() as i64)
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_carry_their_server() {
        assert_eq!(home_server(ROOT_ID), 0);
        let id = make_id(4095, 77);
        assert_eq!((home_server(id), id & 0xffff_ffff_ffff), (4095, 77));
    }
}
