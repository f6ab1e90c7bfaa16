"""Which kernel functions are "the scheduler" and "idle", by kernel era.

Kernel time, scheduler share and profile diffs sum these sets. The 2.x names come from the
seed papers' readprofile listings (000, 002); the modern ones from perf profiles of 5.x/6.x
kernels (CFS, EEVDF, the 6.10 balancing renames). A profile is read with the set of its
kernel's era: 2.6.23 brought CFS and renamed the scheduler core.
"""

from __future__ import annotations

from perfdb.kernels import KernelVersionError, kernel_sort_key

# 2.2-2.6.22: the O(n) and O(1) schedulers.
SCHEDULER_FUNCTIONS_2X = (
    "schedule",
    "goodness",
    "reschedule_idle",
    "__wake_up",
    "__wake_up_sync",
    "try_to_wake_up",
    "wake_up_process",
    "schedule_timeout",
    "schedule_tail",
    "scheduler_tick",
    "load_balance",
    "find_busiest_queue",
    "sys_sched_yield",
)
IDLE_FUNCTIONS_2X = ("default_idle", "cpu_idle", "poll_idle")

# Scheduler core of 5.x/6.x kernels (CFS and EEVDF); 6.10 renamed the balancing entry points.
SCHEDULER_FUNCTIONS_MODERN = (
    "__schedule",
    "schedule",
    "schedule_idle",
    "preempt_schedule_common",
    "context_switch",
    "finish_task_switch",
    "__switch_to",
    "__switch_to_asm",
    "pick_next_task",
    "__pick_next_task",
    "pick_next_task_fair",
    "pick_next_entity",
    "pick_eevdf",
    "put_prev_task_fair",
    "put_prev_entity",
    "set_next_entity",
    "enqueue_task_fair",
    "dequeue_task_fair",
    "enqueue_entity",
    "dequeue_entity",
    "try_to_wake_up",
    "ttwu_do_activate",
    "select_task_rq_fair",
    "select_idle_sibling",
    "check_preempt_wakeup",
    "check_preempt_wakeup_fair",
    "wakeup_preempt",
    "update_curr",
    "update_load_avg",
    "update_cfs_group",
    "reweight_entity",
    "update_rq_clock",
    "load_balance",
    "newidle_balance",
    "sched_balance_rq",
    "sched_balance_newidle",
    "sched_balance_find_src_group",
    "find_busiest_group",
    "scheduler_tick",
    "sched_tick",
    "task_tick_fair",
)
# Idle loops and halt/mwait paths: bare metal (intel_idle, acpi), KVM/Xen guests (pv_*).
IDLE_FUNCTIONS_MODERN = (
    "pv_native_safe_halt",
    "native_safe_halt",
    "xen_safe_halt",
    "default_idle",
    "default_idle_call",
    "arch_cpu_idle",
    "intel_idle",
    "intel_idle_irq",
    "intel_idle_xstate",
    "acpi_idle_enter",
    "acpi_idle_do_entry",
    "acpi_safe_halt",
    "mwait_idle",
    "mwait_idle_with_hints",
    "poll_idle",
    "cpu_idle_poll",
    "do_idle",
    "cpuidle_enter_state",
    "psci_enter_idle_state",
    "cpu_do_idle",
)

_CFS = kernel_sort_key("2.6.23")


def _modern(kernel: str) -> bool:
    try:
        return kernel_sort_key(kernel) >= _CFS
    except KernelVersionError:
        return True  # an unparseable label is most likely a current kernel's uname


def scheduler_functions(kernel: str) -> frozenset[str]:
    """The scheduler set for ``kernel``'s era."""
    return frozenset(SCHEDULER_FUNCTIONS_MODERN if _modern(kernel) else SCHEDULER_FUNCTIONS_2X)


def idle_functions(kernel: str) -> frozenset[str]:
    """The idle set for ``kernel``'s era."""
    return frozenset(IDLE_FUNCTIONS_MODERN if _modern(kernel) else IDLE_FUNCTIONS_2X)
