//! Promise: `examples/slurm/sweep.sbatch` bakes the four variants of `examples/wedge.toml` as a
//! Slurm job array, one task per variant, each into `OUT/<variant name>/` with a `summary.toml`
//! that names its index, its name and its values, and the variants differ.
//!
//! The test starts a one-node Slurm cluster on this machine (munged with a key of its own,
//! slurmctld and slurmd on free ports, every file in a temporary folder), submits the script with
//! `sbatch --wait` and stops every daemon it started, on failure too. It needs root (the daemons
//! run as root) and the Debian packages `slurm-wlm` and `munge`; without them it says so and
//! passes, unless `WEFT_REQUIRE_SLURM=1` (set by `.ci/run` where it installed them), when it fails.

use std::collections::BTreeSet;
use std::fs;
use std::io::Read;
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use weft::core::limits::Limits;

/// The daemons and commands the test runs.
const PROGRAMS: [&str; 6] = ["munged", "slurmctld", "slurmd", "sbatch", "sinfo", "squeue"];

/// How long the job array may take, submission to the last task.
const JOB_TIMEOUT: Duration = Duration::from_secs(100);

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The path of `program` on `PATH` or in the system folders Debian installs daemons to.
fn find(program: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .chain(["/usr/sbin", "/sbin", "/usr/local/sbin"].map(PathBuf::from))
        .map(|dir| dir.join(program))
        .find(|p| p.is_file())
}

/// The daemons started, stopped (killed and reaped) when dropped, whatever happened.
struct Daemons(Vec<(&'static str, Child)>);

impl Drop for Daemons {
    fn drop(&mut self) {
        // slurmd and slurmctld before munged, which they talk to.
        for (_, child) in self.0.iter_mut().rev() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

/// A TCP port nobody listens on now.
fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

/// Everything the cluster wrote, for a failure message.
fn logs(dir: &Path) -> String {
    let mut text = String::new();
    for entry in fs::read_dir(dir).into_iter().flatten().flatten() {
        let path = entry.path();
        if path.extension().is_some_and(|e| e == "log") {
            let body = fs::read_to_string(&path).unwrap_or_default();
            let tail: Vec<&str> = body.lines().rev().take(15).collect();
            text.push_str(&format!("\n--- {}:\n", path.display()));
            for line in tail.into_iter().rev() {
                text.push_str(line);
                text.push('\n');
            }
        }
    }
    text
}

/// `program args` with `SLURM_CONF` set; its stdout, or a panic with its stderr and the logs.
fn slurm(dir: &Path, program: &Path, args: &[&str]) -> String {
    let output = Command::new(program).args(args).env("SLURM_CONF", dir.join("slurm.conf")).output().unwrap();
    assert!(
        output.status.success(),
        "{} {args:?}: {}{}",
        program.display(),
        String::from_utf8_lossy(&output.stderr),
        logs(dir)
    );
    String::from_utf8_lossy(&output.stdout).into_owned()
}

#[test]
fn the_sbatch_array_bakes_every_variant_of_the_wedge() {
    let required = std::env::var("WEFT_REQUIRE_SLURM").is_ok_and(|v| v == "1");
    let found: Vec<Option<PathBuf>> = PROGRAMS.iter().map(|p| find(p)).collect();
    let missing: Vec<&str> =
        PROGRAMS.iter().zip(&found).filter(|(_, f)| f.is_none()).map(|(p, _)| *p).collect();
    let root = Command::new("id").arg("-u").output().is_ok_and(|o| o.stdout.trim_ascii() == b"0");
    let why = if !missing.is_empty() {
        Some(format!("{} not found (apt-get install slurm-wlm munge)", missing.join(", ")))
    } else if !root {
        Some("not root (the test's Slurm daemons run as root)".to_string())
    } else {
        None
    };
    if let Some(why) = why {
        assert!(!required, "WEFT_REQUIRE_SLURM=1, but the Slurm test cannot run: {why}");
        println!("skipped: the Slurm test needs a one-node cluster it cannot start here: {why}");
        return;
    }
    let found: Vec<PathBuf> = found.into_iter().flatten().collect();
    let [munged, slurmctld, slurmd, sbatch, sinfo, squeue]: [PathBuf; 6] = found.try_into().unwrap();

    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    for sub in ["state", "spool"] {
        fs::create_dir(dir.join(sub)).unwrap();
    }
    // A munge key of our own: random bytes, readable by root only.
    let mut key = vec![0u8; 1024];
    fs::File::open("/dev/urandom").unwrap().read_exact(&mut key).unwrap();
    fs::write(dir.join("munge.key"), &key).unwrap();
    let chmod = |path: &Path, mode: &str| {
        assert!(Command::new("chmod").arg(mode).arg(path).status().unwrap().success())
    };
    chmod(&dir.join("munge.key"), "600");

    // The node as slurmd sees it (its name, CPUs, memory): the first line of `slurmd -C`.
    let node = Command::new(&slurmd).arg("-C").output().unwrap();
    let node = String::from_utf8_lossy(&node.stdout).lines().next().unwrap_or_default().to_string();
    let name = node.split_whitespace().next().and_then(|f| f.strip_prefix("NodeName=")).unwrap_or_default();
    assert!(!name.is_empty(), "slurmd -C said {node:?}");
    let d = dir.display();
    let conf = format!(
        "ClusterName=weft\nSlurmctldHost={name}(127.0.0.1)\nSlurmUser=root\nSlurmdUser=root\n\
         AuthType=auth/munge\nAuthInfo=socket={d}/munge.socket\nCredType=cred/munge\n\
         ProctrackType=proctrack/linuxproc\nTaskPlugin=task/none\nSelectType=select/cons_tres\n\
         SelectTypeParameters=CR_Core\nMpiDefault=none\nJobCompType=jobcomp/none\n\
         AccountingStorageType=accounting_storage/none\nJobAcctGatherType=jobacct_gather/none\n\
         StateSaveLocation={d}/state\nSlurmdSpoolDir={d}/spool\nSlurmctldPidFile={d}/slurmctld.pid\n\
         SlurmdPidFile={d}/slurmd.pid\nSlurmctldLogFile={d}/slurmctld.log\nSlurmdLogFile={d}/slurmd.log\n\
         SlurmctldPort={}\nSlurmdPort={}\nReturnToService=2\n\
         {node} NodeAddr=127.0.0.1 State=UNKNOWN\n\
         PartitionName=weft Nodes=ALL Default=YES MaxTime=INFINITE State=UP\n",
        free_port(),
        free_port()
    );
    fs::write(dir.join("slurm.conf"), conf).unwrap();

    let mut daemons = Daemons(Vec::new());
    let mut start = |name: &'static str, program: &Path, args: &[String]| {
        let log = fs::File::create(dir.join(format!("{name}.out.log"))).unwrap();
        let child = Command::new(program)
            .args(args)
            .env("SLURM_CONF", dir.join("slurm.conf"))
            .stdin(Stdio::null())
            .stdout(log.try_clone().unwrap())
            .stderr(log)
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {name}: {e}"));
        daemons.0.push((name, child));
    };
    let at = |file: &str| dir.join(file).display().to_string();
    start(
        "munged",
        &munged,
        &[
            "--foreground".into(),
            "--force".into(),
            format!("--key-file={}", at("munge.key")),
            format!("--socket={}", at("munge.socket")),
            format!("--pid-file={}", at("munged.pid")),
            format!("--log-file={}", at("munged.log")),
            format!("--seed-file={}", at("munged.seed")),
        ],
    );
    wait_for(dir, "munged's socket", Duration::from_secs(10), || dir.join("munge.socket").exists());
    let conf = at("slurm.conf");
    start("slurmctld", &slurmctld, &["-D".into(), "-i".into(), "-f".into(), conf.clone()]);
    start("slurmd", &slurmd, &["-D".into(), "-f".into(), conf]);
    wait_for(dir, "the node to be idle", Duration::from_secs(30), || {
        let output =
            Command::new(&sinfo).args(["-h", "-o", "%t"]).env("SLURM_CONF", dir.join("slurm.conf")).output();
        output.is_ok_and(|o| String::from_utf8_lossy(&o.stdout).trim() == "idle")
    });

    // The shipped script, from its folder, with this build's weft and a temporary output folder;
    // one CPU per task so that two run at once on a small machine.
    let out = dir.join("out");
    let started = Instant::now();
    let mut job = Command::new(&sbatch)
        .args(["--wait", "--cpus-per-task=1"])
        .arg(format!("--output={}/task-%a.log", d))
        .arg(format!("--chdir={}", repo().join("examples/slurm").display()))
        .arg(repo().join("examples/slurm/sweep.sbatch"))
        .env("SLURM_CONF", dir.join("slurm.conf"))
        .env("WEFT", env!("CARGO_BIN_EXE_weft"))
        .env("WEFT_OUT", &out)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let status = loop {
        if let Some(status) = job.try_wait().unwrap() {
            break status;
        }
        if started.elapsed() > JOB_TIMEOUT {
            let queue = slurm(dir, &squeue, &[]);
            let _ = job.kill();
            panic!("the job array did not end in {JOB_TIMEOUT:?}; squeue:\n{queue}{}", logs(dir));
        }
        std::thread::sleep(Duration::from_millis(200));
    };
    let mut stderr = String::new();
    job.stderr.take().unwrap().read_to_string(&mut stderr).unwrap();
    assert!(status.success(), "sbatch --wait: {status}: {stderr}{}", logs(dir));
    println!("the job array ran in {:.1} s", started.elapsed().as_secs_f64());

    // One folder per variant, named as the wedge names it, with the variant's summary.
    let scene = repo().join("examples/wedge.toml");
    let variants = weft::io::wedge_variants(&scene, &Limits::default()).unwrap();
    assert_eq!(variants.len(), 4);
    let folders: BTreeSet<String> =
        fs::read_dir(&out).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    let names: BTreeSet<String> = variants.iter().map(|v| v.name.clone()).collect();
    assert_eq!(folders, names, "{}", logs(dir));
    let mut caches = BTreeSet::new();
    let mut peaks = BTreeSet::new();
    for variant in &variants {
        let folder = out.join(&variant.name);
        let summary: toml::Table = fs::read_to_string(folder.join("summary.toml")).unwrap().parse().unwrap();
        assert_eq!(summary["wedge_index"].as_integer(), Some(variant.index as i64), "{}", variant.name);
        assert_eq!(summary["variant"].as_str(), Some(variant.name.as_str()));
        assert_eq!(summary["scene"].as_str(), Some(fs::canonicalize(&scene).unwrap().to_str().unwrap()));
        let wedge = summary["wedge"].as_table().unwrap();
        assert_eq!(wedge.len(), variant.values.len());
        for (key, value) in &variant.values {
            assert_eq!(wedge.get(key), Some(value), "{}: {key}", variant.name);
        }
        assert_eq!(summary["frames"].as_integer(), Some(30));
        caches.insert(fs::read(folder.join("curtain.pc2")).unwrap());
        peaks.insert(summary["peak_strain"].as_float().unwrap().to_bits());
    }
    assert_eq!(caches.len(), 4, "two variants baked the same bytes");
    assert_eq!(peaks.len(), 4, "two variants reached the same peak strain");
    drop(daemons);
}

/// Waits until `ready`, or panics after `limit` naming `what`, with the cluster's logs.
fn wait_for(dir: &Path, what: &str, limit: Duration, mut ready: impl FnMut() -> bool) {
    let started = Instant::now();
    while !ready() {
        assert!(started.elapsed() < limit, "waited {limit:?} for {what}{}", logs(dir));
        std::thread::sleep(Duration::from_millis(200));
    }
}
