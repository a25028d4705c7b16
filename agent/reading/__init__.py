"""Reading a document: its bytes checked and read (text layer, OCR, an embedded e-invoice), its
layout, the required fields found on it with their evidence, and the findings the document
itself gives. Nothing here knows of a job's steps, a planner or what members do with a review:
the review (``agent.review``) and the inbox (``agent.inbox``) stand on it, never the reverse."""
