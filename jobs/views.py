from django.db.models import Count
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_GET

from .models import Job


@require_GET
def home(request: HttpRequest) -> HttpResponse:
    counts = dict(Job.objects.values_list("state").annotate(n=Count("id")).order_by())
    return render(request, "jobs/home.html", {"counts": counts, "states": Job.State})
