"""Asking the client while answering it, in one place.

- :mod:`.rounds`: ``InputRequired``, the requests a handler may ask (elicitation, sampling, roots)
  and what one round of a request knows (``Round``);
- :mod:`.legacy`: the legacy era's requests to the client, sent by the server itself, and the
  rounds of a handler run again with their answers;
- :mod:`.state`: the sealed ``requestState`` of 2026-07-28, in which the client carries a request's
  rounds.

:class:`~shipcode_mcp.context.Context` (``ctx.elicit``, ``ctx.sample``, ``ctx.list_roots``) is how an
app asks; :mod:`shipcode_mcp.eras` answers a 2026-07-28 request's questions with ``input_required``.
Nothing is imported here: each module is loaded when it is used.
"""
