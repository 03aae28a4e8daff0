/*
 * jemalloc_conf: the allocator's options for the programs linked with
 * jemalloc, read by jemalloc when it starts (its documented `malloc_conf`
 * symbol, which must be visible to the dynamic linker; MALLOC_CONF in the
 * environment still overrides it).
 *
 * jemalloc 5.3 sets up a thread's arena and cache at the thread's first
 * allocation; when the address space is exhausted (ulimit -v) and that set-up
 * fails, it dereferences a null pointer and dies with SIGSEGV, on one of
 * ZeroMQ's threads, before fastbf can say that memory ran out. So: one arena
 * for every thread (narenas:1) and no thread cache (tcache:false). Only the
 * I/O thread allocates on the hot path: the cost measured on the 1e6-job
 * burst and on KTH-SP2 is within 2-5%, inside the noise of those runs.
 */
__attribute__((visibility("default"))) const char *malloc_conf = "narenas:1,oversize_threshold:0,tcache:false";
