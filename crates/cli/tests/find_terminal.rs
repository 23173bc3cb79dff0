//! `canopy find` on a terminal prints each match as it is found (GNU find's line-buffered stdout),
//! not when the walk ends.

mod common;

use common::*;
use std::io::Read;
use std::os::unix::fs::OpenOptionsExt;
use std::sync::mpsc;
use std::time::Duration;

#[test]
fn matches_show_on_a_terminal_while_the_walk_runs() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("root");
    std::fs::create_dir_all(root.join("many")).unwrap();
    std::fs::write(root.join("x"), b"").unwrap();
    for i in 0..5000 {
        std::fs::write(root.join("many").join(format!("{i:0>40}")), b"").unwrap();
    }
    // Everything but x goes to a FIFO nobody reads yet: once the pipe and find's buffer are full
    // (~280 kB of names), the walk blocks. x, met before, must already be on the terminal.
    let fifo = tmp.path().join("fifo");
    mkfifo(&fifo);
    let reader = std::fs::OpenOptions::new().read(true).custom_flags(libc_nonblock()).open(&fifo).unwrap();
    let command = format!(
        "{} find -j 1 {} -name x -print -o -fprint {}",
        env!("CARGO_BIN_EXE_canopy"),
        root.display(),
        fifo.display()
    );
    let mut script = gnu("script");
    script.args(["-qfec", &command, "/dev/null"]).stdin(std::process::Stdio::null());
    script.stdout(std::process::Stdio::piped()).stderr(std::process::Stdio::inherit());
    let mut child = script.spawn().unwrap();
    let mut terminal = child.stdout.take().unwrap();
    let (seen_tx, seen_rx) = mpsc::channel();
    let watcher = std::thread::spawn(move || {
        let mut text = Vec::new();
        let mut buf = [0u8; 4096];
        let mut told = false;
        loop {
            let n = terminal.read(&mut buf).unwrap_or(0);
            if n == 0 {
                return text;
            }
            text.extend_from_slice(&buf[..n]);
            if !told && String::from_utf8_lossy(&text).contains("root/x") {
                told = true;
                let _ = seen_tx.send(());
            }
        }
    });
    // Only a broken build waits this long: the walk cannot end before the FIFO is read.
    let shown = seen_rx.recv_timeout(Duration::from_secs(300));
    if shown.is_err() {
        let _ = child.kill();
    }
    rustix::fs::fcntl_setfl(&reader, rustix::fs::OFlags::empty()).unwrap();
    let mut listed = Vec::new();
    let _ = (&reader).read_to_end(&mut listed);
    let status = child.wait().unwrap();
    let terminal_text = watcher.join().unwrap();
    assert!(
        shown.is_ok(),
        "the match was not on the terminal while the walk ran: {:?}",
        String::from_utf8_lossy(&terminal_text)
    );
    assert!(status.success());
    assert_eq!(
        listed.split(|&b| b == b'\n').filter(|l| !l.is_empty()).count(),
        5002,
        "root, many and its files"
    );
}

fn libc_nonblock() -> i32 {
    rustix::fs::OFlags::NONBLOCK.bits() as i32
}
