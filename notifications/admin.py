from django.contrib import admin

from notifications.models import MailSent, NotificationSettings, PushSubscription


@admin.register(NotificationSettings)
class NotificationSettingsAdmin(admin.ModelAdmin):
    list_display = ("user", "mail", "push", "updated_at")
    list_filter = ("mail", "push")
    search_fields = ("user__username", "user__email")
    raw_id_fields = ("user",)


@admin.register(PushSubscription)
class PushSubscriptionAdmin(admin.ModelAdmin):
    list_display = ("user", "endpoint", "created_at", "last_ok_at", "failures")
    search_fields = ("user__username", "endpoint")
    raw_id_fields = ("user",)
    readonly_fields = ("endpoint", "p256dh", "auth", "created_at", "last_ok_at")


@admin.register(MailSent)
class MailSentAdmin(admin.ModelAdmin):
    list_display = ("user", "game", "sent_at")
    search_fields = ("user__username",)
    raw_id_fields = ("user", "game")
