/*
 * A stand-in for libibverbs.so.1 and its provider, for measuring the cost of rdma4j's data path on a machine
 * without RDMA hardware or emulation: the verbs rdma4j uses to open a device and create a PD, a CQ, a QP and an MR
 * are exported here under their libibverbs names, on objects laid out exactly as <infiniband/verbs.h> says, and the
 * context's ops table holds a post_send, post_recv and poll_cq that do the minimum a real provider does: read every
 * field of every work request and scatter/gather entry, queue a completion for each signaled request, and write every
 * field of each completion polled. Java (through rdma4j's QueuePair and CompletionQueue) and C (through the inline
 * ibv_post_send and ibv_poll_cq of verbs.h, stub-loops.c) call these same functions through the same table.
 *
 * Built at benchmark time (benchmarks/host-bench): gcc -O2 -shared -fPIC -Wl,-soname,libibverbs.so.1; a process
 * finds it through LD_LIBRARY_PATH, where a second name, librdmacm.so.1, points at the same file (rdma4j loads both
 * libraries; nothing of librdmacm is called).
 */
#include <errno.h>
#include <infiniband/verbs.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define EXPORT __attribute__((visibility("default")))

/* One queued completion: what a real provider keeps in its completion ring. */
struct stub_completion {
	uint64_t wr_id;
	uint32_t byte_len;
	uint32_t qp_num;
	enum ibv_wc_opcode opcode;
};

struct stub_cq {
	struct ibv_cq cq;
	struct stub_completion *ring;
	uint32_t capacity;
	uint32_t head;
	uint32_t count;
};

/* What the provider would have read from the requests: kept so that the compiler cannot drop the reads. */
static volatile uint64_t sink;

static struct ibv_device stub_device = {
	.node_type = IBV_NODE_CA,
	.transport_type = IBV_TRANSPORT_IB,
	.name = "stub0",
	.dev_name = "uverbs0",
	.dev_path = "/sys/class/infiniband_verbs/uverbs0",
	.ibdev_path = "/sys/class/infiniband/stub0",
};

static int push(struct ibv_cq *cq, uint64_t wr_id, uint32_t byte_len, uint32_t qp_num, enum ibv_wc_opcode opcode)
{
	struct stub_cq *s = (struct stub_cq *)cq;
	if (s->count == s->capacity)
		return ENOMEM;
	struct stub_completion *c = &s->ring[(s->head + s->count) % s->capacity];
	c->wr_id = wr_id;
	c->byte_len = byte_len;
	c->qp_num = qp_num;
	c->opcode = opcode;
	s->count++;
	return 0;
}

static uint32_t read_sges(const struct ibv_sge *sg, int num_sge, uint64_t *acc)
{
	uint32_t len = 0;
	for (int i = 0; i < num_sge; i++) {
		*acc += sg[i].addr ^ sg[i].lkey;
		len += sg[i].length;
	}
	return len;
}

static int stub_post_send(struct ibv_qp *qp, struct ibv_send_wr *wr, struct ibv_send_wr **bad_wr)
{
	uint64_t acc = 0;
	for (; wr; wr = wr->next) {
		uint32_t len = read_sges(wr->sg_list, wr->num_sge, &acc);
		acc += wr->wr_id + wr->opcode + wr->send_flags + wr->imm_data + wr->wr.rdma.remote_addr + wr->wr.rdma.rkey;
		if (wr->send_flags & IBV_SEND_SIGNALED) {
			enum ibv_wc_opcode op = wr->opcode == IBV_WR_RDMA_WRITE ? IBV_WC_RDMA_WRITE
						: wr->opcode == IBV_WR_RDMA_READ ? IBV_WC_RDMA_READ : IBV_WC_SEND;
			if (push(qp->send_cq, wr->wr_id, len, qp->qp_num, op)) {
				*bad_wr = wr;
				sink += acc;
				return ENOMEM;
			}
		}
	}
	sink += acc;
	return 0;
}

static int stub_post_recv(struct ibv_qp *qp, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad_wr)
{
	uint64_t acc = 0;
	for (; wr; wr = wr->next) {
		uint32_t len = read_sges(wr->sg_list, wr->num_sge, &acc);
		acc += wr->wr_id;
		/* As if the peer's SEND filled the buffer at once. */
		if (push(qp->recv_cq, wr->wr_id, len, qp->qp_num, IBV_WC_RECV)) {
			*bad_wr = wr;
			sink += acc;
			return ENOMEM;
		}
	}
	sink += acc;
	return 0;
}

static int stub_poll_cq(struct ibv_cq *cq, int num_entries, struct ibv_wc *wc)
{
	struct stub_cq *s = (struct stub_cq *)cq;
	int n = 0;
	for (; n < num_entries && s->count > 0; n++) {
		struct stub_completion *c = &s->ring[s->head];
		wc[n] = (struct ibv_wc){
			.wr_id = c->wr_id,
			.status = IBV_WC_SUCCESS,
			.opcode = c->opcode,
			.byte_len = c->byte_len,
			.qp_num = c->qp_num,
			.src_qp = c->qp_num,
		};
		s->head = (s->head + 1) % s->capacity;
		s->count--;
	}
	return n;
}

static int stub_req_notify_cq(struct ibv_cq *cq, int solicited_only)
{
	return EOPNOTSUPP;
}

static int stub_query_port(struct ibv_context *context, uint8_t port_num, struct ibv_port_attr *attr, size_t len)
{
	if (port_num != 1)
		return EINVAL;
	memset(attr, 0, len);
	attr->state = IBV_PORT_ACTIVE;
	attr->max_mtu = IBV_MTU_4096;
	attr->active_mtu = IBV_MTU_4096;
	attr->gid_tbl_len = 1;
	attr->pkey_tbl_len = 1;
	attr->link_layer = IBV_LINK_LAYER_INFINIBAND;
	attr->lid = 1;
	return 0;
}

static int stub_query_device_ex(struct ibv_context *context, const struct ibv_query_device_ex_input *input,
				struct ibv_device_attr_ex *attr, size_t len)
{
	memset(attr, 0, len);
	strcpy(attr->orig_attr.fw_ver, "stub");
	attr->orig_attr.max_qp = 1 << 16;
	attr->orig_attr.max_qp_wr = 1 << 15;
	attr->orig_attr.max_sge = 32;
	attr->orig_attr.max_cq = 1 << 16;
	attr->orig_attr.max_cqe = 1 << 20;
	attr->orig_attr.max_mr = 1 << 20;
	attr->orig_attr.max_mr_size = UINT64_MAX;
	attr->orig_attr.max_pd = 1 << 16;
	attr->orig_attr.max_qp_rd_atom = 16;
	attr->orig_attr.max_qp_init_rd_atom = 16;
	attr->orig_attr.phys_port_cnt = 1;
	return 0;
}

EXPORT struct ibv_device **ibv_get_device_list(int *num_devices)
{
	struct ibv_device **list = calloc(2, sizeof(*list));
	if (!list) {
		errno = ENOMEM;
		return NULL;
	}
	list[0] = &stub_device;
	if (num_devices)
		*num_devices = 1;
	return list;
}

EXPORT void ibv_free_device_list(struct ibv_device **list)
{
	free(list);
}

EXPORT const char *ibv_get_device_name(struct ibv_device *device)
{
	return device->name;
}

EXPORT __be64 ibv_get_device_guid(struct ibv_device *device)
{
	return 0;
}

EXPORT struct ibv_context *ibv_open_device(struct ibv_device *device)
{
	struct verbs_context *v = calloc(1, sizeof(*v));
	if (!v) {
		errno = ENOMEM;
		return NULL;
	}
	v->sz = sizeof(*v);
	v->query_port = stub_query_port;
	v->query_device_ex = stub_query_device_ex;
	v->context.device = device;
	v->context.cmd_fd = -1;
	v->context.async_fd = -1;
	v->context.num_comp_vectors = 1;
	v->context.abi_compat = __VERBS_ABI_IS_EXTENDED;
	v->context.ops.post_send = stub_post_send;
	v->context.ops.post_recv = stub_post_recv;
	v->context.ops.poll_cq = stub_poll_cq;
	v->context.ops.req_notify_cq = stub_req_notify_cq;
	return &v->context;
}

EXPORT int ibv_close_device(struct ibv_context *context)
{
	free(verbs_get_ctx(context));
	return 0;
}

EXPORT int ibv_query_device(struct ibv_context *context, struct ibv_device_attr *attr)
{
	struct ibv_device_attr_ex ex;
	int rc = stub_query_device_ex(context, NULL, &ex, sizeof(ex));
	*attr = ex.orig_attr;
	return rc;
}

EXPORT struct ibv_pd *ibv_alloc_pd(struct ibv_context *context)
{
	struct ibv_pd *pd = calloc(1, sizeof(*pd));
	if (!pd) {
		errno = ENOMEM;
		return NULL;
	}
	pd->context = context;
	return pd;
}

EXPORT int ibv_dealloc_pd(struct ibv_pd *pd)
{
	free(pd);
	return 0;
}

EXPORT struct ibv_mr *ibv_reg_mr_iova2(struct ibv_pd *pd, void *addr, size_t length, uint64_t iova,
				       unsigned int access)
{
	static uint32_t next_key = 0x100;
	struct ibv_mr *mr = calloc(1, sizeof(*mr));
	if (!mr) {
		errno = ENOMEM;
		return NULL;
	}
	mr->context = pd->context;
	mr->pd = pd;
	mr->addr = addr;
	mr->length = length;
	mr->lkey = mr->rkey = __atomic_fetch_add(&next_key, 1, __ATOMIC_RELAXED);
	return mr;
}

EXPORT int ibv_dereg_mr(struct ibv_mr *mr)
{
	free(mr);
	return 0;
}

EXPORT struct ibv_cq *ibv_create_cq(struct ibv_context *context, int cqe, void *cq_context,
				    struct ibv_comp_channel *channel, int comp_vector)
{
	struct stub_cq *s = calloc(1, sizeof(*s));
	if (!s || cqe < 1 || !(s->ring = calloc(cqe, sizeof(*s->ring)))) {
		free(s);
		errno = cqe < 1 ? EINVAL : ENOMEM;
		return NULL;
	}
	s->capacity = cqe;
	s->cq.context = context;
	s->cq.channel = channel;
	s->cq.cq_context = cq_context;
	s->cq.cqe = cqe;
	return &s->cq;
}

EXPORT int ibv_destroy_cq(struct ibv_cq *cq)
{
	struct stub_cq *s = (struct stub_cq *)cq;
	free(s->ring);
	free(s);
	return 0;
}

EXPORT struct ibv_qp *ibv_create_qp(struct ibv_pd *pd, struct ibv_qp_init_attr *attr)
{
	static uint32_t next_qpn = 0x11;
	struct ibv_qp *qp = calloc(1, sizeof(*qp));
	if (!qp) {
		errno = ENOMEM;
		return NULL;
	}
	qp->context = pd->context;
	qp->qp_context = attr->qp_context;
	qp->pd = pd;
	qp->send_cq = attr->send_cq;
	qp->recv_cq = attr->recv_cq;
	qp->srq = attr->srq;
	qp->qp_num = __atomic_fetch_add(&next_qpn, 1, __ATOMIC_RELAXED);
	qp->state = IBV_QPS_RESET;
	qp->qp_type = attr->qp_type;
	return qp;
}

EXPORT int ibv_destroy_qp(struct ibv_qp *qp)
{
	free(qp);
	return 0;
}

EXPORT int ibv_modify_qp(struct ibv_qp *qp, struct ibv_qp_attr *attr, int attr_mask)
{
	if (attr_mask & IBV_QP_STATE)
		qp->state = attr->qp_state;
	return 0;
}

EXPORT const char *ibv_wc_status_str(enum ibv_wc_status status)
{
	return status == IBV_WC_SUCCESS ? "success" : "error";
}

/* Bound by rdma4j when it loads (one table of handles) but not used by the benchmark: refused as a provider would
 * refuse what it lacks. */
EXPORT struct ibv_comp_channel *ibv_create_comp_channel(struct ibv_context *context)
{
	errno = EOPNOTSUPP;
	return NULL;
}

EXPORT struct ibv_srq *ibv_create_srq(struct ibv_pd *pd, struct ibv_srq_init_attr *attr)
{
	errno = EOPNOTSUPP;
	return NULL;
}

EXPORT struct ibv_ah *ibv_create_ah(struct ibv_pd *pd, struct ibv_ah_attr *attr)
{
	errno = EOPNOTSUPP;
	return NULL;
}

EXPORT int ibv_get_cq_event(struct ibv_comp_channel *channel, struct ibv_cq **cq, void **cq_context)
{
	errno = EOPNOTSUPP;
	return -1;
}

EXPORT int ibv_get_async_event(struct ibv_context *context, struct ibv_async_event *event)
{
	errno = EOPNOTSUPP;
	return -1;
}
