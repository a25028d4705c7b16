from typing import TYPE_CHECKING

from django.contrib import admin

from .models import InboundAttachment, InboundMessage, Inbox

if TYPE_CHECKING:
    InboxModelAdmin = admin.ModelAdmin[Inbox]
    AttachmentTabularInline = admin.TabularInline[InboundAttachment, InboundMessage]
    MessageModelAdmin = admin.ModelAdmin[InboundMessage]
else:  # the admin's classes take no type parameters at run time
    InboxModelAdmin = MessageModelAdmin = admin.ModelAdmin
    AttachmentTabularInline = admin.TabularInline


@admin.register(Inbox)
class InboxAdmin(InboxModelAdmin):
    list_display = ["tenant", "updated_at", "updated_by"]
    readonly_fields = ["tenant", "user", "updated_at", "updated_by"]


class AttachmentInline(AttachmentTabularInline):
    model = InboundAttachment
    fields = ["name", "size", "sha256", "job", "refused"]
    readonly_fields = ["name", "size", "sha256", "job", "refused"]
    extra = 0
    can_delete = False


@admin.register(InboundMessage)
class InboundMessageAdmin(MessageModelAdmin):
    """What the mailbox received, read-only: staff see why a team's message made no job."""

    list_display = ["received_at", "tenant", "sender", "outcome", "size", "folder"]
    list_filter = ["outcome", "tenant"]
    readonly_fields = ["key", "tenant", "sender", "size", "outcome", "folder", "received_at"]
    inlines = [AttachmentInline]

    def has_add_permission(self, request: object) -> bool:
        return False

    def has_change_permission(self, request: object, obj: object = None) -> bool:
        return False
