//! Who started this process, and as one of how many tasks: MPI launchers (Open MPI's mpirun,
//! MPICH/Hydra's mpiexec, PMIx) and Slurm's srun say so in the environment. A launch that would
//! make several copies each run the whole job — a build without MPI under mpirun, or srun without
//! an MPI process manager (Slurm's default `MpiDefault=none`) — is refused before anything runs:
//! N copies of `rm` race each other, N copies of `find` print everything N times.

use std::fmt;

/// What the environment says about the launch.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Launch {
    /// The launcher, for messages.
    pub launcher: &'static str,
    /// Tasks started, when the launcher says (`None`: unknown, but more than one if `rank > 0`).
    pub tasks: Option<u32>,
    /// This task's rank, when the launcher says.
    pub rank: Option<u32>,
    /// Whether an MPI process manager (PMI/PMIx, Open MPI's runtime) is there for `MPI_Init`.
    pub mpi_runtime: bool,
}

impl Launch {
    /// Reads the launch from the process environment; `None` when no launcher started it.
    pub fn from_env() -> Option<Launch> {
        Self::from_vars(|name| std::env::var(name).ok())
    }

    /// Reads the launch from `var` (the environment, or a test's).
    pub fn from_vars(var: impl Fn(&str) -> Option<String>) -> Option<Launch> {
        let number = |name: &str| var(name).and_then(|v| v.trim().parse::<u32>().ok());
        let is_set = |name: &str| var(name).is_some();
        if is_set("OMPI_COMM_WORLD_SIZE") || is_set("OMPI_COMM_WORLD_RANK") {
            return Some(Launch {
                launcher: "mpirun (Open MPI)",
                tasks: number("OMPI_COMM_WORLD_SIZE"),
                rank: number("OMPI_COMM_WORLD_RANK"),
                mpi_runtime: true,
            });
        }
        if is_set("PMI_SIZE") || is_set("PMI_RANK") || is_set("MPI_LOCALNRANKS") {
            return Some(Launch {
                launcher: "mpiexec (MPICH/Hydra, PMI)",
                tasks: number("PMI_SIZE"),
                rank: number("PMI_RANK"),
                mpi_runtime: true,
            });
        }
        let slurm_tasks = number("SLURM_STEP_NUM_TASKS").or_else(|| {
            // SLURM_NTASKS is the job's count, also seen by its batch script (one process):
            // it counts only inside a step that srun started.
            let step = var("SLURM_STEP_ID").or_else(|| var("SLURM_STEPID"))?;
            (step != BATCH_STEP).then(|| number("SLURM_NTASKS")).flatten()
        });
        if is_set("PMIX_RANK") {
            return Some(Launch {
                launcher: if slurm_tasks.is_some() { "srun --mpi=pmix" } else { "a PMIx launcher" },
                tasks: slurm_tasks,
                rank: number("PMIX_RANK"),
                mpi_runtime: true,
            });
        }
        let rank = number("SLURM_PROCID");
        (slurm_tasks.is_some() || rank.is_some_and(|r| r > 0)).then_some(Launch {
            launcher: "srun",
            tasks: slurm_tasks,
            rank,
            mpi_runtime: false,
        })
    }

    /// Whether more than one task was started.
    pub fn is_parallel(&self) -> bool {
        self.tasks.is_some_and(|n| n > 1) || self.rank.is_some_and(|r| r > 0)
    }

    fn tasks_text(&self) -> String {
        match self.tasks {
            Some(n) => format!("{n} tasks"),
            None => "several tasks".to_owned(),
        }
    }
}

/// Slurm's step id of a batch script (`SLURM_BATCH_SCRIPT`).
const BATCH_STEP: &str = "4294967291";

/// Why a launch is refused (exit status 2).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LaunchRefused(String);

impl fmt::Display for LaunchRefused {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// A build without MPI started as one of several tasks.
pub fn refuse_without_mpi(launch: &Launch) -> LaunchRefused {
    LaunchRefused(format!(
        "{} started {} of this canopy, but it was built without MPI (the cargo feature `mpi`): each \
         task would run the whole job on its own. Run scripts/setup (it installs Open MPI), build with \
         `cargo build --release --features canopy-cli/mpi`, and start that binary{}; or run canopy \
         without {}.",
        launch.launcher,
        launch.tasks_text(),
        if launch.mpi_runtime { "" } else { " with `srun --mpi=pmix`" },
        launch.launcher,
    ))
}

/// An MPI build started by srun without an MPI process manager, or whose MPI world has one
/// process while the launcher started several.
pub fn refuse_lone_world(launch: &Launch) -> LaunchRefused {
    LaunchRefused(format!(
        "{} started {}, but MPI sees only this one (world size 1): each task would run the whole \
         job on its own. Under Slurm, start canopy with `srun --mpi=pmix` (Slurm's default \
         MpiDefault=none gives no MPI process manager), or with mpirun inside the allocation.",
        launch.launcher,
        launch.tasks_text(),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn launch(vars: &[(&str, &str)]) -> Option<Launch> {
        Launch::from_vars(|name| vars.iter().find(|(k, _)| *k == name).map(|(_, v)| v.to_string()))
    }

    #[test]
    fn no_launcher_no_launch() {
        assert_eq!(launch(&[("HOME", "/root")]), None);
        // A batch script sees its job's task count, but is one process.
        assert_eq!(launch(&[("SLURM_NTASKS", "4"), ("SLURM_PROCID", "0"), ("SLURM_JOB_ID", "7")]), None);
        let batch = [("SLURM_NTASKS", "4"), ("SLURM_PROCID", "0"), ("SLURM_STEP_ID", BATCH_STEP)];
        assert_eq!(launch(&batch), None);
    }

    #[test]
    fn every_launcher_is_recognised_with_its_task_count() {
        let ompi = launch(&[("OMPI_COMM_WORLD_SIZE", "4"), ("OMPI_COMM_WORLD_RANK", "0")]).unwrap();
        assert_eq!((ompi.tasks, ompi.mpi_runtime, ompi.is_parallel()), (Some(4), true, true));
        let hydra = launch(&[("PMI_SIZE", "2"), ("PMI_RANK", "1")]).unwrap();
        assert!(hydra.launcher.contains("Hydra") && hydra.is_parallel());
        let pmix =
            launch(&[("PMIX_RANK", "0"), ("SLURM_STEP_NUM_TASKS", "4"), ("SLURM_PROCID", "0")]).unwrap();
        assert_eq!((pmix.launcher, pmix.tasks, pmix.mpi_runtime), ("srun --mpi=pmix", Some(4), true));
        let srun = launch(&[("SLURM_STEP_NUM_TASKS", "4"), ("SLURM_PROCID", "2")]).unwrap();
        assert_eq!((srun.launcher, srun.tasks, srun.mpi_runtime), ("srun", Some(4), false));
        let old_srun =
            launch(&[("SLURM_NTASKS", "3"), ("SLURM_STEP_ID", "0"), ("SLURM_PROCID", "0")]).unwrap();
        assert_eq!(old_srun.tasks, Some(3));
        let single = launch(&[("SLURM_STEP_NUM_TASKS", "1"), ("SLURM_PROCID", "0")]).unwrap();
        assert!(!single.is_parallel(), "srun -n 1 runs one copy: nothing to refuse");
        let unknown_count = launch(&[("PMIX_RANK", "3")]).unwrap();
        assert!(unknown_count.is_parallel(), "a rank above 0 means several tasks");
    }

    #[test]
    fn refusals_name_the_fix() {
        let srun = launch(&[("SLURM_STEP_NUM_TASKS", "4"), ("SLURM_PROCID", "0")]).unwrap();
        let without = refuse_without_mpi(&srun).to_string();
        assert!(without.contains("`mpi`") && without.contains("scripts/setup"), "{without}");
        assert!(without.contains("srun --mpi=pmix") && without.contains("4 tasks"), "{without}");
        let lone = refuse_lone_world(&srun).to_string();
        assert!(lone.contains("srun --mpi=pmix") && lone.contains("world size 1"), "{lone}");
    }
}
