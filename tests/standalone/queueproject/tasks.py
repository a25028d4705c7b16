"""The project's one task, declared with the Tasks framework's own decorator."""

from django_tasks import task


@task
def add(a: int, b: int) -> int:
    return a + b
