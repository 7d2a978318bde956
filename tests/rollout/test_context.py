"""Context compaction: truncation of old tool output, a summary, a working-memory block."""

from posttrain.rollout.context import MEMORY_TAG, SUMMARY_TAG, ContextConfig, EpisodeContext

PROMPT = [{"role": "user", "content": "do the task"}]


def _fill(ctx, n, out_chars=500):
    for i in range(n):
        note = f"<memory>step {i} done</memory>" if i % 3 == 0 else ""
        ctx.add_turn(f"turn {i} {note}", [{"role": "tool", "name": "shell" if i % 2 else "python",
                                            "content": ("error: " if i == 1 else "") + "o" * out_chars}])


def test_no_limit_never_changes_history():
    ctx = EpisodeContext(PROMPT, ContextConfig(max_context_chars=None))
    _fill(ctx, 20)
    msgs, compacted = ctx.view()
    assert not compacted and len(msgs) == 1 + 40 and msgs[0] == PROMPT[0]


def test_old_tool_output_truncated_first():
    ctx = EpisodeContext(PROMPT, ContextConfig(max_context_chars=3000, keep_recent_tool_outputs=2,
                                               old_tool_output_chars=50))
    _fill(ctx, 6)
    msgs, compacted = ctx.view()
    tools = [m for m in msgs if m["role"] == "tool"]
    assert compacted and len(tools) == 6
    assert all(len(m["content"]) < 100 for m in tools[:-2]) and all(len(m["content"]) == 500 for m in tools[-2:])
    assert not any(SUMMARY_TAG in m["content"] for m in msgs)
    # the stored history was rewritten: the next view extends it unchanged
    again, compacted2 = ctx.view()
    assert again == msgs and not compacted2


def test_summary_and_working_memory_when_still_too_long():
    ctx = EpisodeContext(PROMPT, ContextConfig(max_context_chars=2500, old_tool_output_chars=400))
    _fill(ctx, 12)
    msgs, compacted = ctx.view()
    text = [m["content"] for m in msgs]
    assert compacted and msgs[0] == PROMPT[0]
    assert sum(len(t) for t in text) <= 2500
    summary = next(t for t in text if t.startswith(SUMMARY_TAG))
    assert "earlier turn(s) were removed" in summary and "1 returned an error" in summary
    memory = next(t for t in text if t.startswith(MEMORY_TAG))
    assert "step 9 done" in memory  # the latest <memory> block survives
    assert text[-2].startswith("turn 11")  # the latest exchange is always kept
