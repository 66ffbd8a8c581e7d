#!/usr/bin/env python3
"""DeepSpeed's pipeline TrainSchedule (as Aleph Alpha's Scaling runs it) with blocking sends.

Every stage alternates between forward and backward steps, 2 (m + p - 1) of them: stage s runs
micro-batch step/2 - s/2 forward on the steps of its parity and (step - 1)/2 - p + 1 + s/2
backward on the others (both rounded down, odd and even stages mirrored), receiving activations
and sending gradients before a forward step, sending activations and receiving gradients before a
backward step (DeepSpeed deepspeed/runtime/pipe/schedule.py TrainSchedule; Scaling
src/scaling/core/nn/pipeline_schedule/train.py). Here each send meets its receive (rendezvous:
neither side goes on before both arrived) and takes `transfer` seconds on both sides, serialized
with the stage's compute, as torch.distributed.send / recv on the compute stream do.

Usage:
  scripts/train-schedule-blocking.py P M T_F T_B [TRANSFER]
prints the step time and 1F1B's (m + p - 1)(t_f + t_b) (docs/validation.md, "Per micro-batch
and per iteration").
"""
import sys


def instructions(p, s, m):
    """Stage s's instruction list: (op, micro-batch) with op F, B, send_act, recv_act, send_grad, recv_grad."""
    def valid(mb):
        return 0 <= mb < m

    def step_to_micro_batch(step):
        even_step, even_stage = step % 2 == 0, s % 2 == 0
        if even_step == even_stage:  # a forward step
            return (step if even_step else step - 1) // 2 - s // 2, True
        if even_step:
            return step // 2 - p + (s + 1) // 2, False
        return (step - 1) // 2 - p + 1 + s // 2, False

    out, previous = [], -1
    for step in range(2 * (m + p - 1)):
        mb, forward = step_to_micro_batch(step)
        if forward:
            if valid(mb) and s > 0:
                out.append(("recv_act", mb))
            if valid(previous) and s > 0:
                out.append(("send_grad", previous))
        else:
            if valid(previous) and s < p - 1:
                out.append(("send_act", previous))
            if valid(mb) and s < p - 1:
                out.append(("recv_grad", mb))
        if valid(mb):
            out.append(("F" if forward else "B", mb))
        previous = mb
    return out


PARTNER = {"send_act": (1, "recv_act"), "recv_act": (-1, "send_act"),
           "send_grad": (-1, "recv_grad"), "recv_grad": (1, "send_grad")}


def step_time(p, m, t_f, t_b, transfer=0.0):
    lists = [instructions(p, s, m) for s in range(p)]
    position, clock = [0] * p, [0.0] * p
    moved = True
    while moved:
        moved = False
        for s in range(p):
            while position[s] < len(lists[s]):
                op, mb = lists[s][position[s]]
                if op in ("F", "B"):
                    clock[s] += t_f if op == "F" else t_b
                    position[s] += 1
                    moved = True
                    continue
                offset, partner_op = PARTNER[op]
                q = s + offset
                if position[q] < len(lists[q]) and lists[q][position[q]] == (partner_op, mb):
                    clock[s] = clock[q] = max(clock[s], clock[q]) + transfer
                    position[s] += 1
                    position[q] += 1
                    moved = True
                    continue
                break
    if any(position[s] != len(lists[s]) for s in range(p)):
        raise RuntimeError("the schedule deadlocked")
    return max(clock)


def main():
    if len(sys.argv) not in (5, 6):
        sys.exit(__doc__)
    p, m = int(sys.argv[1]), int(sys.argv[2])
    t_f, t_b = float(sys.argv[3]), float(sys.argv[4])
    transfer = float(sys.argv[5]) if len(sys.argv) == 6 else 0.0
    t = step_time(p, m, t_f, t_b, transfer)
    one_f_one_b = (m + p - 1) * (t_f + t_b)
    print(f"TrainSchedule with blocking sends: {t:.6g} s; 1F1B (m + p - 1)(t_f + t_b): {one_f_one_b:.6g} s; "
          f"ratio {t / one_f_one_b:.4f}; per micro-batch {(t - one_f_one_b) / m:.4g} s more")
    return 0


if __name__ == "__main__":
    sys.exit(main())
