/*
 * The one header jextract reads (see ./regenerate). rdma_cma.h includes verbs.h, so a single run binds all
 * the rdma-core headers without duplicate classes. poll.h and fcntl.h give the completion-channel wait its
 * struct pollfd and flags; errno.h gives the errno names the exceptions map.
 */
#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>
#include <rdma/rdma_verbs.h>
#include <poll.h>
#include <fcntl.h>
#include <errno.h>
#include <string.h>
