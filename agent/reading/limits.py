"""The largest document the review takes: declared apart from the readers, so that what only
needs the figure (the kind's registration at every process's start) does not load them."""

MB = 1024 * 1024
MAX_DOCUMENT_BYTES = 5 * MB
