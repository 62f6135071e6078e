/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Where FUSE requests are read: the CPU a request was issued on, the CPU a
 * daemon read it on, and whether it waited on the reading device's own
 * queue (FUSE_DEV_IOC_BIND), not on another device's or the shared one.
 */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM fuse

#if !defined(_TRACE_FUSE_BIND_H) || defined(TRACE_HEADER_MULTI_READ)
#define _TRACE_FUSE_BIND_H

#include <linux/tracepoint.h>

TRACE_EVENT(fuse_request_read,
	    TP_PROTO(const struct fuse_req *req, const struct fuse_dev *fud,
		     const struct fuse_iqueue *fiq),
	    TP_ARGS(req, fud, fiq),
	    TP_STRUCT__entry(__field(dev_t, connection)
			     __field(uint64_t, unique)
			     __field(uint32_t, opcode)
			     __field(int, cpu)
			     __field(int, read_cpu)
			     __field(bool, own)),
	    TP_fast_assign(__entry->connection = fuse_conn_get_id(req->chan->conn);
			   __entry->unique = req->in.h.unique;
			   __entry->opcode = req->in.h.opcode;
			   __entry->cpu = req->cpu;
			   __entry->read_cpu = raw_smp_processor_id();
			   __entry->own = fiq == READ_ONCE(fud->iq);),
	    TP_printk("connection %u req %llu opcode %u cpu %d read_cpu %d queue %s",
		      __entry->connection, __entry->unique, __entry->opcode,
		      __entry->cpu, __entry->read_cpu,
		      __entry->own ? "own" : "other")
);

#endif /* _TRACE_FUSE_BIND_H */

#undef TRACE_INCLUDE_PATH
#define TRACE_INCLUDE_PATH .
#undef TRACE_INCLUDE_FILE
#define TRACE_INCLUDE_FILE dev_bind_trace
#include <trace/define_trace.h>
