/*
 * memstat: the memory a process holds, as fastbf's benchmarks report it.
 *
 * VmRSS alone overstates what a long-lived scheduler keeps: the allocator
 * caches freed pages (jemalloc for up to ten seconds by default), so right
 * after a million-job submission is parsed the resident set still holds
 * the message's text and parse buffers. The settled figure first asks the
 * allocator to hand its free pages back (jemalloc's arena purge when the
 * process runs on jemalloc, found at run time so that nothing here
 * depends on which allocator was linked; glibc's malloc_trim otherwise),
 * then reads VmRSS: the memory the process's live data needs.
 *
 * Linux only (/proc/self/status). Not thread-safe with respect to other
 * threads allocating at the same time: the figure is then merely approximate.
 */
#ifndef FBF_TOOLS_MEMSTAT_H
#define FBF_TOOLS_MEMSTAT_H

/* VmRSS of this process in KiB, or -1 when /proc cannot be read. */
long fbf_memstat_rss_kib(void);

/* VmRSS in KiB after the allocator returned the free pages it caches, or
 * -1 when /proc cannot be read. */
long fbf_memstat_settled_rss_kib(void);

#endif
