/*
 * canopy_aggr.h: the C ABI of Canopy's custom aggregations (like MRNet filters / TBON-FS aggregations).
 *
 * An aggregation is one function, found by name in a shared library with gloadaggr(library, function) and
 * bound to a group operation with gbindaggr. Canopy calls it on every host for that host's members (inputs
 * of kind CANOPY_RAW: one member's own result each) and at every inner node of the aggregation tree for the
 * outputs of its children (inputs of kind CANOPY_AGGREGATED: earlier outputs of this same function). The
 * tree's shape decides how members are grouped, so the function must be associative: aggregating
 * aggregates must give the same answer as aggregating everything at once (carry sums and counts, not
 * averages). Inputs are in member order.
 *
 * The function runs inside the Canopy process of every host and inner node: a crash there is a crash of
 * that process. Build with: cc -shared -fPIC -I<this directory> my_aggr.c -o my_aggr.so
 */
#ifndef CANOPY_AGGR_H
#define CANOPY_AGGR_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The kind of one input. */
enum canopy_data_kind {
    CANOPY_RAW = 0,        /* one member's result: read data, a status, or a struct canopy_stat */
    CANOPY_AGGREGATED = 1  /* an earlier output of this function */
};

/* One input (the paper's struct file_data). */
struct canopy_file_data {
    uint32_t kind;          /* enum canopy_data_kind */
    const void *data;       /* the bytes: not NUL-terminated, no alignment guarantee (memcpy multi-byte
                               values out), valid during the call only */
    size_t data_len;
    const uint64_t *files;  /* indices of the group members this input covers, ascending */
    size_t files_len;       /* 1 for CANOPY_RAW */
};

/*
 * Raw data formats, by operation: read and pread give the bytes read; fstat gives one struct canopy_stat;
 * a status aggregation gives one int64_t (bytes transferred, an offset, or 0), in host byte order.
 */
struct canopy_stat {
    uint64_t size;
    uint64_t nlink;
    int64_t mtime;       /* seconds since the epoch */
    uint32_t mode;       /* st_mode: file type and permission bits */
    uint32_t uid;
    uint32_t gid;
    uint32_t mtime_nsec;
};

/* The output: set data to a buffer from malloc() (Canopy frees it with free()) or NULL when data_len is 0. */
struct canopy_output {
    void *data;
    size_t data_len;
};

/* Returns 0 on success; anything else fails the aggregation (reported to the client as an error). */
typedef int (*canopy_aggr_fn)(size_t num_inputs, const struct canopy_file_data *inputs,
                              struct canopy_output *output);

#ifdef __cplusplus
}
#endif

#endif /* CANOPY_AGGR_H */
