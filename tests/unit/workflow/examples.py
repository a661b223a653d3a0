"""The two workflow documents of ``workflow-format.md`` ("A workflow document"), as written there, for the
tests of every part of the workflow type."""

#: The first example: asks the campaign's owner to approve a review, and catches an unanswered request.
BRIEF_APPROVAL = """\
document:
  dsl: '1.0.3'
  namespace: campaign-review-tutorial
  name: brief-approval
  version: '1.0.0'
  summary: Asks the campaign's owner to approve a review, and asks for a revision when nobody answered.
input:
  schema:
    document:
      type: object
      required: [owner, review]
do:
  - approval:
      try:
        - ask:
            call: run_definition
            with:
              type: interaction
              name: approve-campaign-brief
              input: '${ $data }'
      catch:
        errors:
          with: { type: https://on.auto/problems/unanswered, kind: expired }
        do:
          - unanswered: { set: { verdict: revise, note: No answer within two days } }
"""
#: The second: reviews a brief with a reasoning function, retries it, asks for approval, stops on a
#: rejection.
REVIEW_AND_APPROVE = """\
document: { dsl: '1.0.3', namespace: campaigns, name: review-and-approve, version: '1.0.0' }
use:
  retries:
    patient: { delay: { seconds: 5 }, backoff: { exponential: {} }, limit: { attempt: { count: 3 } } }
do:
  - review:
      try:
        - run-review:
            call: run_definition
            with: { type: reasoning, name: review-brief, input: { brief: '${ $data.brief }' } }
      catch:
        errors: { with: { status: 503 } }
        retry: patient
      output:
        as: '${ $merge([$input, { "review": $data }]) }'
  - approval:
      call: run_definition
      with:
        type: interaction
        name: approve-campaign-brief
        input: { owner: '${ $data.owner }', review: '${ $data.review }' }
      output:
        as: '${ $merge([$input, { "decision": $data }]) }'
  - route:
      switch:
        - revise: { when: '${ $data.decision.verdict = "revise" }', then: stop }
        - otherwise: { then: continue }
  - done: { set: { approved: true, review: '${ $data.review }' }, then: end }
  - stop:
      raise:
        error: { type: https://example.com/errors/revision-asked, status: 422, title: Revision asked }
"""
