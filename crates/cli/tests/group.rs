//! `canopy group` as a user runs it: the real binary, including as an unprivileged user.

use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::Command;

const CANOPY: &str = env!("CARGO_BIN_EXE_canopy");

fn write(root: &Path, rank: usize, path: &str, content: &str, mode: u32) {
    let file = root.join(rank.to_string()).join(path.trim_start_matches('/'));
    std::fs::create_dir_all(file.parent().unwrap()).unwrap();
    std::fs::write(&file, content).unwrap();
    std::fs::set_permissions(&file, std::fs::Permissions::from_mode(mode)).unwrap();
}

#[test]
fn help_shows_examples() {
    let output = Command::new(CANOPY).args(["group", "--help"]).output().unwrap();
    assert!(output.status.success());
    let help = String::from_utf8(output.stdout).unwrap();
    assert!(
        help.contains("Examples:") && help.contains("canopy group read /proc/loadavg --agg average"),
        "{help}"
    );
}

#[test]
fn permission_denied_is_named_per_member_for_an_unprivileged_user() {
    let dir = tempfile::tempdir().unwrap();
    // The unprivileged user must be able to traverse the host roots.
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    for rank in 0..4 {
        let mode = if rank == 1 || rank == 3 { 0o000 } else { 0o644 };
        write(dir.path(), rank, "/etc/secret", "public\n", mode);
        std::fs::set_permissions(dir.path().join(rank.to_string()), std::fs::Permissions::from_mode(0o755))
            .unwrap();
        std::fs::set_permissions(
            dir.path().join(format!("{rank}/etc")),
            std::fs::Permissions::from_mode(0o755),
        )
        .unwrap();
    }
    let root = format!("{}/{{rank}}", dir.path().display());
    let args = ["group", "read", "/etc/secret", "--hosts", "4", "--host-root", &root, "-S"];
    // Root ignores permission bits, so run as nobody when we are root.
    let mut command = if is_root() {
        let mut c = Command::new("setpriv");
        c.args(["--reuid=65534", "--regid=65534", "--clear-groups", CANOPY]);
        c
    } else {
        Command::new(CANOPY)
    };
    let output = command.args(args).output().unwrap();
    let stdout = String::from_utf8(output.stdout).unwrap();
    let stderr = String::from_utf8(output.stderr).unwrap();
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    assert_eq!(stdout, "---------------\nhost[0,2] (2)\n---------------\npublic\n");
    assert_eq!(stderr, "canopy group: host[1,3]:/etc/secret: Permission denied\n");
}

use canopy_testkit::is_root;
