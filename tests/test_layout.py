"""The tree says which folder is the queue and which the product, and these tests hold the line.

``jobs`` is the queue: a reusable Django app that knows no product. It imports neither the
product's web app (``web``), nor the document review (``agent``), the supplier register
(``suppliers``), inbound e-mail (``mailin``), the instruments (``ops``) or the benchmarks
(``bench``), and it says nothing of invoices, suppliers, reviews, model providers or tenants: a kind
contributes its own words (``web.kind_pages.KindPages.words``), and the queue shares its workers between
*scopes*, which the product maps its tenants to. ``web`` and ``agent`` may import ``jobs``. The review reads
the register; the register never imports the review.

The apps stand in layers (``LAYERS``: the queue, the web, the register, mail intake and the
instruments, the review, then the project and the benchmarks): each imports only those below it.
Inside ``agent`` the rooms stand the same way (``ROOMS``: reading, review, inbox, then the app's
top), and no import circle closes among its modules, not even through an import inside a function.

What crosses from one module to another has a public name, and is imported where readers, ruff
and mypy see it: no module reaches for another's ``_private`` names, none imports by a string.
"""

from __future__ import annotations

import ast
import functools
import re
import sys
from pathlib import Path

from django.core.management import get_commands

from tests.conftest import ROOT

QUEUE = ROOT / "jobs"
OUTSIDE_THE_QUEUE = {"accounts", "providers", "documents", "web", "agent", "suppliers", "mailin", "ops", "bench"}
PRODUCT = {"jobs", "jobsite", *OUTSIDE_THE_QUEUE}
# The product's words: none of them belongs in the queue's code, comments or templates
# ("preview" is no review: the match starts at a word). The queue says scope where the product says tenant,
# and its own outside calls are to an "outside service": the model provider is the product's too
# (``providers`` holds its budget).
PRODUCT_WORDS = re.compile(r"\b(invoice|supplier|review|tenant|provider)", re.IGNORECASE)
# Where the queue may still say tenant or provider: its migrations, the history of the names and models
# it once had, and the job's column, which keeps its name in the database (``Job.scope``, ``db_column``;
# the SQL names it through ``jobs.sql.fragments.SCOPE_ID``).
OLD_NAMES = {"tenant", "provider"}
KEPT_COLUMN = 'db_column="tenant_id"'


def imported_packages(path: Path) -> set[str]:
    """Top-level packages a module imports, at module level or inside functions."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.Import):
            found |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.add(node.module.split(".")[0])
    return found


def queue_files(*patterns: str) -> list[Path]:
    return sorted(path for pattern in patterns for path in QUEUE.rglob(pattern))


def test_the_queue_imports_neither_the_product_nor_the_instruments():
    offenders = {}
    for path in queue_files("*.py"):
        name = str(path.relative_to(ROOT))
        outside = imported_packages(path) & OUTSIDE_THE_QUEUE
        if outside:
            offenders[name] = sorted(outside)
    assert offenders == {}


# The apps in layers, lowest first: each imports only the layers below its own, so every dependency
# points down and none can close a circle. The project (settings, URLs), then the benchmarks, stand on top.
LAYERS = ({"jobs"}, {"accounts", "providers", "documents"}, {"web"}, {"suppliers", "mailin", "ops"}, {"agent"},
          {"jobsite"}, {"bench"})


def app_imports() -> dict[str, set[str]]:
    """Each product app -> the other product apps its modules import (migrations aside)."""
    return {app: set().union(*(imported_packages(path) & PRODUCT - {app} for path in (ROOT / app).rglob("*.py")
                               if "migrations" not in path.parts))
            for app in sorted(PRODUCT)}


def test_every_dependency_between_the_apps_points_down_their_layers():
    below = {app: set().union(*LAYERS[:depth]) for depth, layer in enumerate(LAYERS) for app in layer}
    assert set(below) == PRODUCT  # every app has its layer
    upward = {app: sorted(imported - below[app]) for app, imported in app_imports().items() if imported - below[app]}
    assert upward == {}


def test_the_provider_budget_imports_only_the_queue_and_django():
    imported = set().union(*(imported_packages(path) for path in (ROOT / "providers").rglob("*.py")))
    assert imported - sys.stdlib_module_names - {"__future__", "django", "jobs", "providers"} == set()


# What an S3-compatible store needs (``documents.object_store``, installed with '.[s3]').
OBJECT_STORE_CLIENT = {"botocore", "storages"}


def test_the_documents_import_only_the_queue_django_and_the_stores_client():
    imported = set().union(*(imported_packages(path) for path in (ROOT / "documents").rglob("*.py")))
    assert imported - sys.stdlib_module_names - {"__future__", "django", "jobs", "documents", *OBJECT_STORE_CLIENT} \
        == set()


# The documents' own names: their store's modules and the job's columns about its document, which
# left the queue for ``documents`` (its migrations, which once held the columns, aside).
DOCUMENT_NAMES = re.compile(r"\b(document_store|object_store|document_(name|type|size|sha256)|accepts_document|"
                            r"max_document_bytes|check_document|keep_page_images|has_page_images|Document(?!Pane)[A-Z]\w*)\b")


def test_the_queue_keeps_no_document_of_its_own():
    """No store, no document column, rule or error: the queue hands a kept input to the app that keeps
    it (``jobs.queue.accept``'s ``keep_input``) and shows it through a hook
    (``jobs.admin.kind_triage.JobInput``)."""
    from django.apps import apps

    found = {}
    for path in queue_files("*.py", "*.html", "*.txt"):
        if "migrations" in path.parts:
            continue
        hits = [line.strip() for line in path.read_text().splitlines() if DOCUMENT_NAMES.search(line)]
        if hits:
            found[str(path.relative_to(ROOT))] = hits
    assert found == {}
    assert [f.name for m in apps.get_app_config("jobs").get_models() for f in m._meta.concrete_fields
            if "document" in f.name] == []


def test_the_document_check_would_see_a_document_name():
    assert DOCUMENT_NAMES.search("job.document_sha256") and DOCUMENT_NAMES.search("raise DocumentTooComplex(")
    assert DOCUMENT_NAMES.search("from jobs import document_store") and DOCUMENT_NAMES.search("kind.accepts_document")
    assert not DOCUMENT_NAMES.search("kind_triage.DocumentPane") and not DOCUMENT_NAMES.search("a document's pages")


def test_the_register_never_imports_the_review():
    offenders = {str(path.relative_to(ROOT)): "agent" for path in sorted((ROOT / "suppliers").rglob("*.py"))
                 if "agent" in imported_packages(path)}
    assert offenders == {}


def says_a_product_word(line: str, *, in_migration: bool = False) -> bool:
    """Whether a line of the queue says a product word: tenant and provider count outside its
    migrations, but for the declaration of the column that keeps the old name."""
    words = [m.group(1).lower() for m in PRODUCT_WORDS.finditer(line.replace(KEPT_COLUMN, ""))]
    return any(word not in OLD_NAMES or not in_migration for word in words)


def test_the_queue_says_no_product_word():
    """Its modules (strings and comments alike) and any template it owns."""
    found = {}
    for path in queue_files("*.py", "*.html", "*.txt"):
        name = str(path.relative_to(ROOT))
        in_migration = "migrations" in path.relative_to(QUEUE).parts
        hits = [line.strip() for line in path.read_text().splitlines()
                if says_a_product_word(line, in_migration=in_migration)]
        if hits:
            found[name] = hits
    assert found == {}


# The accounts' names: the queue has scopes and the project's user model, no tenants, members'
# commands or API tokens of its own (``accounts`` has them).
ACCOUNT_NAMES = re.compile(r"\b(Tenant|ApiToken|createmember|createtoken)\b")


def test_the_queue_has_no_accounts_of_its_own():
    """Its modules and templates name none of the accounts' models or commands (its migrations,
    which once held them, aside), and none of its models is a user model."""
    from django.apps import apps
    from django.contrib.auth.base_user import AbstractBaseUser

    found = {}
    for path in queue_files("*.py", "*.html", "*.txt"):
        if "migrations" in path.parts:
            continue
        hits = [line.strip() for line in path.read_text().splitlines() if ACCOUNT_NAMES.search(line)]
        if hits:
            found[str(path.relative_to(ROOT))] = hits
    assert found == {}
    assert not [m for m in apps.get_app_config("jobs").get_models() if issubclass(m, AbstractBaseUser)]


def test_the_queue_templates_include_none_of_the_product():
    """The product shows what it owns on the queue's pages through a registered hook
    (``jobs.admin.kind_triage.DocumentPane``), never by the queue naming its templates."""
    found = {}
    for path in queue_files("*.html"):
        named = re.findall(r"{%\s*(?:include|extends)\s+[\"']([^\"'/]+)/", path.read_text())
        if set(named) & OUTSIDE_THE_QUEUE:
            found[str(path.relative_to(ROOT))] = sorted(set(named) & OUTSIDE_THE_QUEUE)
    assert found == {}
    assert (QUEUE / "templates" / "admin" / "jobs" / "job" / "change_form.html").is_file()


def test_the_word_check_would_see_a_product_word():
    assert PRODUCT_WORDS.search("the Invoice number") and PRODUCT_WORDS.search("# reviewed twice")
    assert not PRODUCT_WORDS.search("page previews") and not PRODUCT_WORDS.search("an outside service's 429")
    assert says_a_product_word("with ctx.provider_slot():") and says_a_product_word("ProviderHold.objects")
    assert says_a_product_word("# the model provider's 429")
    assert not says_a_product_word("('providerhold', models.Model)", in_migration=True)
    # Tenant, in any case and in names, outside the migrations; the old column's declaration aside.
    assert says_a_product_word("# the Tenant's jobs") and says_a_product_word("def accept(*, tenant_id: int)")
    assert says_a_product_word('Job.objects.filter(tenant_id=1).values("tenant_id")')
    assert says_a_product_word('"TENANT_MAX_WAITING": 5000')
    assert says_a_product_word('@admin.display(description="tenants")')
    assert not says_a_product_word('db_column="tenant_id")') and not says_a_product_word('f"{JOB}.{SCOPE_ID}"')
    assert says_a_product_word('db_column="tenant_id")  # the tenant')
    assert not says_a_product_word("('tenant', models.ForeignKey(to='jobs.scope'))", in_migration=True)
    assert says_a_product_word("help_text='the supplier'", in_migration=True)


def test_a_kind_without_words_is_told_in_generic_ones():
    from web import kind_pages

    assert kind_pages.of("no.such.kind").words == kind_pages.Words() and kind_pages.Words().running == "Running"
    assert not [value for value in vars(kind_pages.Words()).values() if PRODUCT_WORDS.search(value)]


def test_the_product_apps_are_apart_from_the_queue():
    """The pages and the API are the web app's; the demo accounts are the product's too."""
    assert not (QUEUE / "views.py").exists() and not (QUEUE / "urls.py").exists()
    assert get_commands()["setupdemo"] == "web"
    assert get_commands()["runworkers"] == "jobs"


def test_the_benchmark_commands_come_from_the_bench_app():
    commands = get_commands()
    assert commands["queuebench"] == "bench"
    assert commands["workerbench"] == "bench"
    assert not list(QUEUE.rglob("*bench*.py"))


def product_modules() -> list[tuple[str, Path]]:
    """Each module of the product and its benchmarks, by its dotted name."""
    found = []
    for package in sorted(PRODUCT):
        for path in sorted((ROOT / package).rglob("*.py")):
            parts = path.relative_to(ROOT).with_suffix("").parts
            found.append((".".join(parts[:-1] if parts[-1] == "__init__" else parts), path))
    return found


@functools.cache
def tree_of(path: Path) -> ast.Module:
    return ast.parse(path.read_text(), filename=str(path))


@functools.cache
def is_module(dotted: str) -> bool:
    path = ROOT.joinpath(*dotted.split("."))
    return path.with_suffix(".py").is_file() or (path / "__init__.py").is_file()


def is_private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


def origin(module: str, node: ast.ImportFrom, *, package: bool) -> str:
    """The dotted module a ``from ... import`` reads, relative levels resolved."""
    if not node.level:
        return node.module or ""
    base = module.split(".")[: None if package else -1]
    base = base[: len(base) - node.level + 1]
    return ".".join([*base, *([node.module] if node.module else [])])


def private_reaches(module: str, tree: ast.Module, *, package: bool = False) -> list[str]:
    """Another product module's ``_private`` names this one imports (``from .x import _y``) or
    reads through a module it imported (``x._y``)."""
    found, modules = [], set()  # names bound to a product module here
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and (source_module := origin(module, node, package=package)):
            if source_module.split(".")[0] not in PRODUCT:
                continue
            found += [f"from {source_module} import {a.name}" for a in node.names if is_private(a.name)]
            modules |= {a.asname or a.name for a in node.names if is_module(f"{source_module}.{a.name}")}
        elif isinstance(node, ast.Import):
            modules |= {a.asname or a.name.split(".")[0] for a in node.names if a.name.split(".")[0] in PRODUCT}
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and is_private(node.attr):
            root = node.value
            while isinstance(root, ast.Attribute):
                root = root.value
            if isinstance(root, ast.Name) and root.id in modules:
                found.append(f"{ast.unparse(node.value)}.{node.attr}")
    return found


def test_no_module_reaches_for_another_modules_private_names():
    """A name another module needs is public: renaming a ``_helper`` must not break a stranger."""
    offenders = {}
    for module, path in product_modules():
        reaches = private_reaches(module, tree_of(path), package=path.name == "__init__.py")
        if reaches:
            offenders[str(path.relative_to(ROOT))] = reaches
    assert offenders == {}


def test_the_private_name_check_would_see_a_reach():
    source = ("from .page import _Found, Page\nfrom .. import documents\nfrom jobs.models import Job\n"
              "documents._pdf_reader(b'')\ndocuments.rules._check_pages(1)\nJob._meta\nPage._column\n")
    assert private_reaches("agent.reading.fields.amounts", ast.parse(source)) == [
        "from agent.reading.fields.page import _Found", "documents._pdf_reader", "documents.rules._check_pages"]
    assert private_reaches("agent.reading.fields", ast.parse("from .values import _spans\n"), package=True) == [
        "from agent.reading.fields.values import _spans"]


def test_no_module_imports_the_product_by_a_string():
    """``importlib.import_module("agent.x")`` hides an import from readers, ruff and mypy; an
    import cycle is broken by moving the shared piece down, not by hiding it."""
    offenders = {}
    for _, path in product_modules():
        for node in ast.walk(tree_of(path)):
            if (isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Constant)
                    and isinstance(node.func, ast.Attribute | ast.Name)
                    and getattr(node.func, "attr", getattr(node.func, "id", "")) in {"import_module", "__import__"}
                    and str(node.args[0].value).split(".")[0] in PRODUCT):
                offenders.setdefault(str(path.relative_to(ROOT)), []).append(node.args[0].value)
    assert offenders == {}


# --- Inside the agent: its rooms, and no import circle -------------------------------------------------------------

# The agent's rooms, lowest first: reading a document, the bounded review, then what members do with a
# reviewed document. A module imports only modules of its own room or of the rooms below; the app's
# foundation (its package and its models) stands under all three, and what is in no room (the pages,
# views, admin, commands, the kind the app registers) on top of them.
ROOMS = ("agent.reading", "agent.review", "agent.inbox")
FOUNDATION = frozenset({"agent", "agent.models"})


def room_of(module: str) -> int:
    """0 for the foundation, 1, 2, 3 for the rooms in their order, 4 for the app's top."""
    if module in FOUNDATION:
        return 0
    for depth, room in enumerate(ROOMS, start=1):
        if module == room or module.startswith(room + "."):
            return depth
    return len(ROOMS) + 1


def agent_imports(module: str, tree: ast.Module, *, package: bool = False) -> set[str]:
    """The agent's modules one of its modules imports, at module level or inside functions:
    ``from x import y`` reads the module ``x.y`` when there is one, else ``x``."""
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and (source := origin(module, node, package=package)):
            found |= {f"{source}.{a.name}" if is_module(f"{source}.{a.name}") else source for a in node.names}
    return {name for name in found if name.split(".")[0] == "agent" and name != module}


def agent_graph() -> dict[str, set[str]]:
    """Each module of the agent (migrations aside) -> the agent's modules it imports."""
    return {module: agent_imports(module, tree_of(path), package=path.name == "__init__.py")
            for module, path in product_modules()
            if module.split(".")[0] == "agent" and "migrations" not in path.parts}


def import_circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The circles in an import graph: each strongly connected set of two or more modules, or a
    module importing itself (Tarjan's algorithm, without recursion), each sorted, in order."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    circles = []
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph.get(start, ()))))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, targets = work[-1]
            target = next(targets, None)
            if target is not None:
                if target not in index:
                    index[target] = low[target] = len(index)
                    stack.append(target)
                    on_stack.add(target)
                    work.append((target, iter(sorted(graph.get(target, ())))))
                elif target in on_stack:
                    low[node] = min(low[node], index[target])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                members = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    members.append(member)
                    if member == node:
                        break
                if len(members) > 1 or node in graph.get(node, ()):
                    circles.append(sorted(members))
    return sorted(circles)


def upward_imports(graph: dict[str, set[str]]) -> list[str]:
    """Each import from a lower room into a higher one, as "importer -> imported"."""
    return sorted(f"{module} -> {imported}" for module, imported_ in graph.items() for imported in imported_
                  if room_of(imported) > room_of(module))


def test_no_import_circle_closes_inside_the_agent():
    """Imports inside functions count: a circle is broken by moving the shared piece down (the
    review's ``steps``, its ``revision``), not by importing late."""
    assert import_circles(agent_graph()) == []


def test_the_agents_rooms_import_only_downwards():
    graph = agent_graph()
    assert {room for room in ROOMS if not any(room_of(module) == ROOMS.index(room) + 1 for module in graph)} == set()
    assert upward_imports(graph) == []


def test_the_circle_check_would_see_a_circle():
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a", "d"}, "d": set(), "e": {"e"}, "f": {"a"}}
    assert import_circles(graph) == [["a", "b", "c"], ["e"]]
    assert import_circles({"a": {"b"}, "b": {"c"}, "c": set()}) == []
    # An import inside a function is an edge of the graph like any other.
    source = "from .steps import SEQUENCE\n\ndef validate():\n    from . import model_reader\n"
    assert agent_imports("agent.review.tools", ast.parse(source)) == {"agent.review.steps", "agent.review.model_reader"}
    # The circle the steps broke: the model reader reading ``SEQUENCE`` from the tools again.
    graph = agent_graph()
    made_up = {**graph, "agent.review.model_reader": graph["agent.review.model_reader"] | {"agent.review.tools"}}
    assert [circle for circle in import_circles(made_up)
            if {"agent.review.model_reader", "agent.review.tools"} <= set(circle)] != []


def test_the_room_check_would_see_an_upward_import():
    graph = {
        "agent.reading.layout": {"agent.review.tools", "agent.models"},
        "agent.review.tools": {"agent.reading.layout", "agent.inbox.corrections"},
        "agent.inbox.work": {"agent.review.tools", "agent.views"},
        "agent.views": {"agent.inbox.work", "agent.reading.layout"},
        "agent.models": {"agent.reading.layout"},
    }
    assert upward_imports(graph) == [
        "agent.inbox.work -> agent.views", "agent.models -> agent.reading.layout",
        "agent.reading.layout -> agent.review.tools", "agent.review.tools -> agent.inbox.corrections"]
    assert [room_of(m) for m in ("agent", "agent.reading.fields.page", "agent.review", "agent.inbox.work",
                                 "agent.management.commands.reviewbench")] == [0, 1, 2, 3, 4]


def test_the_distribution_ships_every_app():
    """``pip install .`` finds packages by the root pyproject's ``include``: an app left out of it
    would be missing from an installed Docket and from nothing else."""
    import fnmatch
    import tomllib

    include = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"]["find"]["include"]
    apps = {path.parent.name for path in ROOT.glob("*/apps.py")} | {"jobsite", "bench"}
    assert {app for app in apps if not any(fnmatch.fnmatch(app, pattern) for pattern in include)} == set()
