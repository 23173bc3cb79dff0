//! Links `canopy` as a position-dependent executable. As a PIE, the dynamic loader had to apply
//! ~40,000 relative relocations at every start: it read a 1 MB table and wrote to every page of
//! the vtables and constant tables, ~1.2 MB of the resident memory that `canopy du` is measured by.
//! The code stays position-independent; only the link of the binary changes. The price: the
//! executable's own image is not address-randomised (libraries, heap and stacks still are).

fn main() {
    println!("cargo:rustc-link-arg-bins=-no-pie");
}
