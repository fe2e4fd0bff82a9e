// SPDX-License-Identifier: LGPL-2.1-or-later
#include <errno.h>

#include "cache.h"
#include "repair.h"

int famfs_repair_log_header(struct famfs_log_header *h, const struct famfs_check_repair *plan,
			    struct famfs_repair_action ret_actions[FAMFS_REPAIR_MAX_ACTIONS], size_t *ret_n,
			    struct famfs_err *err)
{
	size_t n = 0;

	famfs_cache_invalidate(h, sizeof(*h));
	if (h->next_index != plan->old_next_index || h->next_seqnum != plan->old_next_seqnum)
		return famfs_err_set(err, -EAGAIN, "the log changed while it was checked");
	if (h->next_index != plan->new_next_index)
		ret_actions[n++] = (struct famfs_repair_action){ "next_index", h->next_index, plan->new_next_index };
	if (h->next_seqnum != plan->new_next_index)
		ret_actions[n++] = (struct famfs_repair_action){ "next_seqnum", h->next_seqnum, plan->new_next_index };
	h->next_seqnum = plan->new_next_index;
	h->next_index = plan->new_next_index;
	famfs_cache_flush(h, sizeof(*h));
	*ret_n = n;
	return 0;
}
