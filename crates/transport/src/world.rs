//! The processes a tool runs in: one local process, or the ranks of an MPI job.

use crate::launch::{Launch, LaunchRefused};

/// Exit status of an MPI job aborted because a rank did not answer within the timeout given to
/// [`World::watch`] (the group layer's for a hung rank too).
pub const NO_ANSWER_EXIT: u8 = 1;

pub struct World {
    kind: Kind,
}

enum Kind {
    Local,
    #[cfg(feature = "mpi")]
    Mpi(crate::mpi::MpiWorld),
}

impl World {
    /// Joins the MPI job when the process was started by an MPI launcher (mpirun, srun), and runs
    /// as a single local process otherwise. Call once per process. Refuses a launch of several
    /// tasks that would each run the whole job ([`crate::launch`]): a build without MPI, or MPI
    /// without a process manager (srun without `--mpi=pmix`).
    pub fn init() -> Result<World, LaunchRefused> {
        let Some(launch) = Launch::from_env() else { return Ok(World::local()) };
        #[cfg(feature = "mpi")]
        if launch.mpi_runtime
            && let Some(world) = crate::mpi::MpiWorld::init()
        {
            if world.size() == 1 && launch.is_parallel() {
                return Err(crate::launch::refuse_lone_world(&launch));
            }
            return Ok(World { kind: Kind::Mpi(world) });
        }
        if !launch.is_parallel() {
            return Ok(World::local());
        }
        if cfg!(feature = "mpi") {
            Err(crate::launch::refuse_lone_world(&launch))
        } else {
            Err(crate::launch::refuse_without_mpi(&launch))
        }
    }

    pub fn local() -> World {
        World { kind: Kind::Local }
    }

    pub fn rank(&self) -> u32 {
        match &self.kind {
            Kind::Local => 0,
            #[cfg(feature = "mpi")]
            Kind::Mpi(w) => w.rank(),
        }
    }

    pub fn size(&self) -> u32 {
        match &self.kind {
            Kind::Local => 1,
            #[cfg(feature = "mpi")]
            Kind::Mpi(w) => w.size(),
        }
    }

    /// Whether this process prints results (rank 0).
    pub fn is_root(&self) -> bool {
        self.rank() == 0
    }

    /// Whether a launcher (mpirun, mpiexec, srun) started this process. Its stdout is then the
    /// launcher's (Open MPI gives each rank a pseudo-terminal whatever mpirun's own output is), so
    /// "is stdout a terminal" says nothing about where the output goes.
    pub fn launched() -> bool {
        Launch::from_env().is_some()
    }

    /// The node of every rank, by rank: ranks with equal numbers share a machine (a shared-memory
    /// split, or `CANOPY_RANKS_PER_NODE` consecutive ranks). Nodes are numbered from 0 in the order
    /// of their lowest rank.
    pub fn nodes(&self) -> Vec<u32> {
        match &self.kind {
            Kind::Local => vec![0],
            #[cfg(feature = "mpi")]
            Kind::Mpi(w) => w.nodes().to_vec(),
        }
    }

    /// Ends every process of the job at once with exit status `code` (`MPI_Abort`), for when some
    /// rank hangs and a collective ending would wait for it forever. One process simply exits.
    pub fn abort(&self, code: u8) -> ! {
        match &self.kind {
            Kind::Local => std::process::exit(i32::from(code)),
            #[cfg(feature = "mpi")]
            Kind::Mpi(w) => w.abort(code),
        }
    }

    /// Under MPI, from now on to the end of the job: a rank that does not answer for `timeout`
    /// (stopped, partitioned, dead) makes the job abort with a message naming it and exit status
    /// [`NO_ANSWER_EXIT`]. `None` leaves it as it is. Each rank answers from a thread of its own, so
    /// a busy rank never counts as silent. One process: nothing to watch.
    #[cfg_attr(not(feature = "mpi"), allow(unused_variables))]
    pub fn watch(&self, timeout: Option<std::time::Duration>) {
        #[cfg(feature = "mpi")]
        if let Kind::Mpi(w) = &self.kind {
            w.watch(timeout);
        }
    }

    /// Byte messages between this world's processes, for layers above it: one exchange per process
    /// (see [`crate::Messenger::finish`]).
    pub fn messenger(&self) -> crate::Messenger<'_> {
        match &self.kind {
            Kind::Local => crate::Messenger::local(),
            #[cfg(feature = "mpi")]
            Kind::Mpi(w) => crate::Messenger::mpi(crate::mpi::MpiMessenger::new(w.communicator())),
        }
    }

    /// The MPI world communicator, for the layers that run their own protocol on it (the
    /// distributed walk); `None` for one local process.
    #[cfg(feature = "mpi")]
    pub fn communicator(&self) -> Option<&::mpi::topology::SimpleCommunicator> {
        match &self.kind {
            Kind::Local => None,
            Kind::Mpi(w) => Some(w.communicator()),
        }
    }
}

/// This machine's name, as ranks report it in messages and statistics.
pub fn hostname() -> String {
    rustix::system::uname().nodename().to_string_lossy().into_owned()
}
