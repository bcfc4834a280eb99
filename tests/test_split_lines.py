"""Lines split before the log reached us are joined back before matching: chunks a logger or a
collector re-prefixed ("[rank3]:", a timestamp), and rows a pager wrapped under its line numbers."""

from dbglog.diagnose import signatures as S

# PyTorch ProcessGroupNCCL's watchdog line, as torchrun prints it.
WATCHDOG = ("[E1120 09:12:33.123456 ProcessGroupNCCL.cpp:632] [Rank 3] Watchdog caught collective operation "
            "timeout: WorkNCCL(SeqNum=4021, OpType=ALLREDUCE, NumelIn=1048576, NumelOut=1048576, "
            "Timeout(ms)=600000) ran for 600017 milliseconds before timing out.")


def chunks(text: str, width: int) -> list[str]:
    return [text[i:i + width] for i in range(0, len(text), width)]


def test_a_watchdog_message_cut_into_rank_prefixed_chunks_is_named_at_its_first_line():
    log = ("[rank0]:step 10 loss 1.2\n" + "".join(f"[rank3]:{c}\n" for c in chunks(WATCHDOG, 80))
           + "[rank0]:step 11 loss 1.1\n")
    unjoined = S._classify(log, None, 8, None, None)
    assert unjoined is None or unjoined.name != "nccl.watchdog_timeout"  # (cut, no line holds the message)
    m = S.classify_text(log)
    assert m.name == "nccl.watchdog_timeout" and m.line_no == 2
    assert any("split under a log prefix" in w for w in m.warnings)


def test_chunks_of_two_ranks_interleaved_are_joined_per_rank():
    a, b = chunks(WATCHDOG, 70), chunks("[W1120 09:12:33.1 ProcessGroupNCCL.cpp:1] rank 1 waiting on the "
                                        "barrier for its peers to arrive, this is fine and expected here", 70)
    rows = [f"[rank3]:{a[0]}", f"[rank1]:{b[0]}", f"[rank3]:{a[1]}", f"[rank1]:{b[1]}"] + [f"[rank3]:{c}" for c in a[2:]]
    joined, _, starts = S.join_prefixed("\n".join(rows) + "\n")
    assert f"[rank3]:{WATCHDOG}".encode() in joined.split(b"\n") and starts[:2] == [0, 1]
    assert S.classify_text("\n".join(rows)).name == "nccl.watchdog_timeout"


def test_chunks_each_stamped_by_the_collector_are_joined_without_their_stamps():
    # kubectl logs --timestamps: RFC 3339 time with nanoseconds before every line
    rows = [f"2026-11-20T09:12:33.{i:09d}Z [rank3]:{c}" for i, c in enumerate(chunks(WATCHDOG, 90))]
    log = "2026-11-20T09:12:32.000000000Z [rank0]:step 10 loss 1.2\n" + "\n".join(rows) + "\n"
    m = S.classify_text(log)
    assert m.name == "nccl.watchdog_timeout" and m.line_no == 2
    assert b"2026-11-20T09:12:33.000000001Z" not in S.join_prefixed(log)[0]


def test_rows_a_pager_wrapped_under_its_line_numbers_are_joined():
    # less -N: the number in a 7-wide column and a space; a wrapped line's next rows blank there
    line = f"[rank3]:{WATCHDOG}"
    rows = chunks(line, 92)
    log = (f"{1:7d} [rank0]:step 10 loss 1.2\n{2:7d} {rows[0]}\n" + "".join(f"{'':8}{r}\n" for r in rows[1:])
           + f"{3:7d} [rank0]:step 11\n")
    m = S.classify_text(log)
    assert m.name == "nccl.watchdog_timeout" and m.line_no == 2
    assert any("a pager wrapped" in w for w in m.warnings)


def test_prefixed_lines_of_their_own_length_are_left_alone():
    log = "".join(f"[rank{r}]:step {i} loss 1.{i:02d} lr 1e-4 throughput 1234.5 tokens/s on 8 GPUs\n"
                  for i in range(5) for r in range(2))
    assert S.join_prefixed(log) is None and S.join_numbered(log) is None
    assert S.join_prefixed("no prefix at all, long enough to be a wrapped line of a terminal ok\n" * 3) is None


def test_chunks_under_a_journal_prefix_are_joined():
    # journalctl's short format: "Mon dd hh:mm:ss host unit[pid]: " before each record
    rows = [f"Dec 02 03:12:0{i} gpu-node-3 python3[1394]: {c}" for i, c in enumerate(chunks(WATCHDOG, 100))]
    log = "Dec 02 03:11:59 gpu-node-3 python3[1394]: step 10 loss 1.2\n" + "\n".join(rows) + "\n"
    m = S.classify_text(log)
    assert m.name == "nccl.watchdog_timeout" and m.line_no == 2
