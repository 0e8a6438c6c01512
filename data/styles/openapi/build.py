"""Build ``data/styles/openapi/``: a large schema-heavy registry derived from OpenAPI-like specs.

61 fictional SaaS/REST services (billing, accounting, payments, inventory, shipping, fleet, HR,
payroll, recruiting, helpdesk, ITSM, CMS, IoT, CRM, e-commerce, clinics, property management,
logistics, CI, cloud, identity...). Each service is a short spec below: resources with their
fields (``status`` enums, ``*_id`` references, dates), custom actions (``void``, ``approve``,
``reroute``...) and sub-resources (``Invoice`` -> ``LineItem``). Every resource expands to the
operations an OpenAPI spec generator would emit (``listInvoices``, ``getInvoice``,
``createInvoice``, ``updateInvoice``, ``deleteInvoice``, ``voidInvoice``,
``listInvoiceLineItems``...), plus the users, webhooks and audit-log endpoints every service
has. Tool names are ``<service>_<operationId>`` (``billingco_voidInvoice``), within
``[a-zA-Z0-9_-]{1,64}``. Descriptions are terse, as spec summaries are ("List invoices",
"Update", "Void an invoice"); the meaning sits in parameter names, enums and parameter
descriptions.

Labels: every request names the service it is about, by product name or by a phrase that
only one service answers to (``aliases`` below, checked unique), as users of many internal
systems do ("in the billing system", "on Shipfast"); ``check()`` enforces it. The operation
within the service is implied by the wording (entities, verbs, filters), not copied.

Splits: ``assign_splits`` of ``toolsel.datasets`` (alternate dev/test within each category,
in file order), reimplemented below so the script runs without the package.

Deterministic (no randomness, no network): run from the repository root with
``python data/styles/openapi/build.py``; the output is byte-identical on every run.
"""

from __future__ import annotations

import json
import re
import zlib
from pathlib import Path

HERE = Path(__file__).resolve().parent
NAME_RE = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")

# A resource: (Name, "field spec", "action,action", "Sub(field spec);Sub2(...)")
# field spec: comma separated; "name*" required; "name:type"; "name[a/b/c]" enum.
R = tuple
SERVICES: list[tuple[str, list[str], list[R]]] = [
    ("billingco", ["Billingco", "billing system"], [
        ("Invoice", "customer_id*,status[draft/open/paid/void/uncollectible],due_date:date,total:number,currency,memo",
         "void,send,finalize,markUncollectible", "LineItem(description*,quantity:integer,unit_price:number,tax_rate_id)"),
        ("Customer", "name*,email,billing_address,tax_id,currency", "", ""),
        ("Subscription", "customer_id*,plan_id*,status[trialing/active/past_due/canceled],current_period_end:date", "cancel,pause,resume", ""),
        ("Plan", "name*,amount:number,interval[month/year],currency", "archive", ""),
        ("CreditNote", "invoice_id*,amount:number,reason[duplicate/fraudulent/order_change/product_unsatisfactory]", "void", "")]),
    ("ledgerly", ["Ledgerly", "accounting ledger", "general ledger"], [
        ("Account", "name*,type[asset/liability/equity/revenue/expense],code", "", ""),
        ("JournalEntry", "date*:date,memo,status[draft/posted]", "post,reverse", "Line(account_id*,debit:number,credit:number)"),
        ("Vendor", "name*,email,payment_terms", "", ""),
        ("Bill", "vendor_id*,due_date:date,amount:number,status[draft/awaiting_payment/paid]", "approve,pay", ""),
        ("TaxRate", "name*,rate:number,region", "", "")]),
    ("payflow", ["Payflow", "payment processor"], [
        ("Payment", "amount*:number,currency*,customer_id,status[pending/succeeded/failed/refunded],method[card/bank_transfer/wallet]", "capture,cancel", ""),
        ("Refund", "payment_id*,amount:number,reason", "", ""),
        ("Payout", "amount:number,destination_account,status[pending/paid/failed]", "cancel", ""),
        ("Dispute", "payment_id,status[needs_response/under_review/won/lost],reason", "submitEvidence,accept", "")]),
    ("stockroom", ["Stockroom", "inventory system"], [
        ("Item", "sku*,name*,category,unit_cost:number,reorder_point:integer", "", ""),
        ("Warehouse", "code*,name,city,country", "", ""),
        ("StockLevel", "item_id*,warehouse_id*,quantity:integer", "adjust", ""),
        ("Transfer", "from_warehouse_id*,to_warehouse_id*,status[draft/in_transit/received/cancelled]", "ship,receive", "Line(item_id*,quantity*:integer)"),
        ("StockCount", "warehouse_id*,status[open/completed],counted_at:date-time", "complete", "")]),
    ("shipfast", ["Shipfast", "shipping platform"], [
        ("Shipment", "order_id,origin_warehouse_id,destination_warehouse_id,carrier[dhl/ups/fedex/dpd],status[created/in_transit/delayed/delivered/exception],estimated_delivery:date",
         "cancel,reroute", "Parcel(weight_kg:number,length_cm:number,width_cm:number,height_cm:number,tracking_number)"),
        ("Label", "shipment_id*,format[pdf/zpl]", "void", ""),
        ("Pickup", "address*,pickup_date*:date,carrier", "cancel", ""),
        ("Rate", "origin_postal_code*,destination_postal_code*,weight_kg:number", "", "")]),
    ("fleetline", ["Fleetline", "fleet management"], [
        ("Vehicle", "plate*,make,model,status[active/maintenance/retired],odometer_km:integer", "", ""),
        ("Driver", "name*,license_number,status[available/on_route/off_duty]", "", ""),
        ("Route", "vehicle_id,driver_id,date:date,status[planned/in_progress/completed]", "start,complete", "Stop(address*,sequence:integer,eta:date-time)"),
        ("MaintenanceOrder", "vehicle_id*,type[oil_change/tires/inspection/repair],scheduled_for:date,status[scheduled/done]", "complete", ""),
        ("FuelLog", "vehicle_id*,liters:number,cost:number,date:date", "", "")]),
    ("peoplehq", ["PeopleHQ", "HR system"], [
        ("Employee", "first_name*,last_name*,email,department_id,manager_id,status[active/on_leave/terminated],start_date:date", "terminate,rehire", ""),
        ("Department", "name*,head_id", "", ""),
        ("TimeOffRequest", "employee_id*,type[vacation/sick/parental/unpaid],start_date*:date,end_date*:date,status[pending/approved/denied]", "approve,deny,cancel", ""),
        ("Position", "title*,department_id,status[open/filled/closed]", "", ""),
        ("Review", "employee_id*,cycle,rating:integer,status[draft/submitted]", "submit", "")]),
    ("payrollpro", ["PayrollPro", "payroll"], [
        ("PayRun", "period_start*:date,period_end*:date,status[draft/approved/paid]", "approve,submit", "Payslip(employee_id*,gross:number,net:number)"),
        ("Compensation", "employee_id*,salary:number,currency,effective_date:date", "", ""),
        ("Deduction", "employee_id*,type[pension/health/union/garnishment],amount:number", "", ""),
        ("Bonus", "employee_id*,amount*:number,reason,pay_date:date", "approve", "")]),
    ("hireloop", ["Hireloop", "applicant tracking", "recruiting system"], [
        ("Job", "title*,department,location,status[draft/open/on_hold/closed]", "publish,close", ""),
        ("Candidate", "name*,email,source,tags:array", "", ""),
        ("Application", "candidate_id*,job_id*,stage[applied/screen/interview/offer/hired/rejected]", "advance,reject", "Note(body*)"),
        ("Interview", "application_id*,scheduled_at:date-time,interviewer_ids:array,kind[phone/onsite/technical]", "cancel,reschedule", ""),
        ("Offer", "application_id*,salary:number,start_date:date,status[draft/sent/accepted/declined]", "send,rescind", "")]),
    ("deskly", ["Deskly", "support desk", "customer support"], [
        ("Ticket", "subject*,requester_id,assignee_id,priority[low/normal/high/urgent],status[new/open/pending/solved/closed],tags:array",
         "merge,escalate", "Comment(body*,public:boolean)"),
        ("Macro", "title*,actions", "", ""),
        ("Group", "name*", "", ""),
        ("SlaPolicy", "name*,first_response_minutes:integer", "", ""),
        ("Organization", "name*,domain", "", "")]),
    ("ticketflow", ["TicketFlow", "IT service desk", "ITSM"], [
        ("Incident", "short_description*,severity[sev1/sev2/sev3/sev4],status[new/in_progress/resolved/closed],assignment_group,configuration_item_id",
         "resolve,reopen", "WorkNote(body*)"),
        ("ChangeRequest", "title*,risk[low/medium/high],status[draft/scheduled/implemented/cancelled],planned_start:date-time", "approve,schedule", ""),
        ("Problem", "title*,status[open/known_error/resolved]", "", ""),
        ("ConfigurationItem", "name*,type[server/laptop/application/network],owner_id,status[in_use/retired]", "", "")]),
    ("pagekit", ["PageKit", "website CMS", "company website"], [
        ("Page", "title*,slug*,status[draft/published/archived],author_id,locale", "publish,unpublish,duplicate", "Revision(note)"),
        ("Post", "title*,body,status[draft/scheduled/published],category_id,publish_at:date-time", "publish,schedule", ""),
        ("MediaFile", "filename*,alt_text,folder_id", "", ""),
        ("Category", "name*,parent_id", "", ""),
        ("Redirect", "from_path*,to_path*,status_code:integer", "", "")]),
    ("contentgrid", ["ContentGrid", "headless CMS"], [
        ("Entry", "content_type_id*,fields,locale,status[draft/changed/published]", "publish,unpublish,archive", ""),
        ("ContentType", "name*,display_field", "", ""),
        ("Asset", "title*,file_url,locale", "process,publish", ""),
        ("Environment", "name*", "", ""),
        ("Locale", "code*,name,fallback_code", "", "")]),
    ("sensornet", ["SensorNet", "IoT platform", "sensor platform"], [
        ("Device", "serial*,model,site_id,status[online/offline/maintenance],firmware_version", "reboot,decommission", "Reading(metric*,value:number,recorded_at:date-time)"),
        ("Site", "name*,address,timezone", "", ""),
        ("Alarm", "device_id,severity[info/warning/critical],status[active/acknowledged/cleared],metric", "acknowledge,clear", ""),
        ("FirmwareRelease", "version*,model,notes", "", ""),
        ("Rule", "name*,metric*,threshold:number,comparator[gt/lt/eq],action[notify/webhook]", "enable,disable", "")]),
    ("meterwise", ["MeterWise", "smart meter"], [
        ("Meter", "meter_number*,premise_id,type[electric/gas/water],status[active/disconnected]", "disconnect,reconnect", "Read(value*:number,read_at:date-time)"),
        ("Premise", "address*,account_id", "", ""),
        ("Outage", "area*,status[reported/confirmed/restored],started_at:date-time", "", ""),
        ("Tariff", "name*,rate_per_kwh:number", "", "")]),
    ("crmly", ["Crmly", "the CRM", "our CRM"], [
        ("Contact", "first_name,last_name*,email,company_id,owner_id,lifecycle_stage[subscriber/lead/customer]", "", ""),
        ("Company", "name*,domain,industry,city", "", ""),
        ("Deal", "name*,company_id,amount:number,stage[qualification/proposal/negotiation/won/lost],close_date:date,owner_id", "markWon,markLost", ""),
        ("Activity", "type[call/email/meeting/note],contact_id,deal_id,due_date:date,done:boolean", "complete", ""),
        ("Pipeline", "name*", "", "")]),
    ("mailblast", ["MailBlast", "newsletter tool", "email marketing"], [
        ("Campaign", "name*,subject,list_id,status[draft/scheduled/sending/sent],send_at:date-time", "send,schedule,cancel,sendTest", ""),
        ("List", "name*", "", "Member(email*,status[subscribed/unsubscribed/cleaned],merge_fields)"),
        ("Template", "name*,html", "", ""),
        ("Segment", "list_id*,conditions", "", ""),
        ("Automation", "name*,status[active/paused]", "pause,start", "")]),
    ("bookit", ["BookIt", "appointment booking"], [
        ("Appointment", "service_id*,staff_id,customer_id,start*:date-time,status[booked/confirmed/cancelled/no_show/completed]", "confirm,cancel,reschedule", ""),
        ("Service", "name*,duration_minutes:integer,price:number", "", ""),
        ("Staff", "name*,email", "", ""),
        ("Location", "name*,address", "", "")]),
    ("eventra", ["Eventra", "event ticketing"], [
        ("Event", "name*,venue_id,starts_at:date-time,status[draft/on_sale/sold_out/cancelled]", "publish,cancel", "TicketType(name*,price:number,quantity:integer)"),
        ("Venue", "name*,city,capacity:integer", "", ""),
        ("Attendee", "event_id*,name,email,checked_in:boolean", "checkIn", ""),
        ("Order", "event_id*,buyer_email,status[pending/paid/refunded]", "refund", ""),
        ("DiscountCode", "code*,percent_off:number,event_id", "", "")]),
    ("shopcart", ["ShopCart", "web shop", "online store"], [
        ("Product", "title*,sku,price:number,status[active/draft/archived],vendor", "", "Variant(option1,price:number,inventory_quantity:integer)"),
        ("Order", "customer_id,status[open/paid/fulfilled/cancelled/refunded],created_at:date-time", "cancel,fulfill,refund", ""),
        ("Customer", "email*,first_name,last_name,tags:array", "", ""),
        ("Collection", "title*", "", ""),
        ("GiftCard", "initial_value*:number,code,expires_on:date", "disable", ""),
        ("Discount", "code*,value:number,type[percentage/fixed_amount],starts_at:date-time", "", "")]),
    ("posterm", ["PosTerm", "point of sale", "tills"], [
        ("Sale", "store_id*,register_id,total:number,status[open/completed/voided]", "void,refund", ""),
        ("Store", "name*,city", "", ""),
        ("Register", "store_id*,name", "open,close", ""),
        ("Shift", "register_id*,employee_id,opened_at:date-time,status[open/closed]", "close", ""),
        ("CashDrop", "shift_id*,amount:number", "", "")]),
    ("procura", ["Procura", "procurement", "purchasing system"], [
        ("PurchaseOrder", "supplier_id*,status[draft/submitted/approved/received/cancelled],expected_date:date,total:number", "submit,approve,cancel,receive", "Line(item*,quantity*:integer,unit_price:number)"),
        ("Supplier", "name*,country,rating:integer,status[active/blocked]", "block", ""),
        ("Requisition", "requester_id*,status[draft/pending_approval/approved/rejected],needed_by:date", "approve,reject", ""),
        ("Contract", "supplier_id*,start_date:date,end_date:date,value:number,status[active/expired/terminated]", "renew,terminate", "")]),
    ("projectly", ["Projectly", "project tracker"], [
        ("Project", "name*,owner_id,status[planned/active/on_hold/done],due_date:date", "archive", ""),
        ("Task", "project_id*,title*,assignee_id,status[todo/in_progress/blocked/done],due_date:date,priority[low/medium/high]", "complete,reopen", "Comment(body*)"),
        ("Milestone", "project_id*,name*,due_date:date", "", ""),
        ("TimeEntry", "task_id*,user_id,minutes:integer,date:date", "", "")]),
    ("gitforge", ["GitForge", "code hosting"], [
        ("Repository", "name*,visibility[public/private/internal],default_branch", "archive,transfer", ""),
        ("PullRequest", "repository_id*,title*,head*,base*,state[open/merged/closed],draft:boolean", "merge,close,requestReview", "Comment(body*,path,line:integer)"),
        ("Release", "repository_id*,tag_name*,name,draft:boolean,prerelease:boolean", "publish", ""),
        ("Branch", "repository_id*,name*,protected:boolean", "protect", "")]),
    ("buildrun", ["BuildRun", "CI server"], [
        ("Pipeline", "project_id*,ref,status[pending/running/success/failed/canceled]", "cancel,retry", "Job(name,stage,status[pending/running/success/failed])"),
        ("PipelineSchedule", "project_id*,cron*,ref,active:boolean", "run", ""),
        ("Variable", "key*,value*,protected:boolean,environment_scope", "", ""),
        ("Runner", "description,status[online/offline/paused],tags:array", "pause", "")]),
    ("cloudhost", ["CloudHost", "cloud servers"], [
        ("Server", "name*,region[fra1/nyc3/sgp1/lon1],size,image,status[active/off/archived]", "reboot,powerOff,powerOn,resize", "Snapshot(name)"),
        ("Volume", "name*,size_gb:integer,region", "attach,detach", ""),
        ("Firewall", "name*,inbound_rules", "", ""),
        ("LoadBalancer", "name*,region,algorithm[round_robin/least_connections]", "", ""),
        ("DnsRecord", "domain*,type[A/AAAA/CNAME/MX/TXT],name*,data*,ttl:integer", "", "")]),
    ("watchtower", ["Watchtower", "uptime monitoring"], [
        ("Monitor", "name*,url,type[http/ping/port/keyword],interval_seconds:integer,status[up/down/paused]", "pause,resume", ""),
        ("Incident", "monitor_id,status[open/acknowledged/resolved],started_at:date-time", "acknowledge,resolve", ""),
        ("StatusPage", "name*,subdomain", "", ""),
        ("MaintenanceWindow", "monitor_ids:array,starts_at*:date-time,ends_at*:date-time", "", "")]),
    ("oncallr", ["OnCallr", "paging", "on-call"], [
        ("Alert", "service_id,urgency[high/low],status[triggered/acknowledged/resolved]", "acknowledge,resolve,snooze,reassign", ""),
        ("Service", "name*,escalation_policy_id", "", ""),
        ("Schedule", "name*,time_zone", "", "Override(user_id*,start*:date-time,end*:date-time)"),
        ("EscalationPolicy", "name*,rules", "", "")]),
    ("docsafe", ["DocSafe", "document management"], [
        ("Document", "title*,folder_id,owner_id,status[draft/final/archived],retention_until:date", "lock,unlock,archive", "Version(file_url*,comment)"),
        ("Folder", "name*,parent_id", "", ""),
        ("Share", "document_id*,email*,permission[view/comment/edit],expires_at:date-time", "revoke", ""),
        ("RetentionPolicy", "name*,days:integer", "", "")]),
    ("signwise", ["SignWise", "e-signature"], [
        ("Envelope", "subject*,status[created/sent/delivered/completed/declined/voided],sender_id", "send,void,resend", "Recipient(name*,email*,routing_order:integer,role[signer/cc/approver])"),
        ("Template", "name*,document_id", "", ""),
        ("SigningLink", "envelope_id*,recipient_id*", "", "")]),
    ("learnhub", ["LearnHub", "training platform", "LMS"], [
        ("Course", "title*,status[draft/published/retired],category", "publish", ""),
        ("Enrollment", "course_id*,user_id*,status[enrolled/in_progress/completed/expired],due_date:date", "complete,unenroll", ""),
        ("Certificate", "enrollment_id*,issued_on:date", "revoke", ""),
        ("Quiz", "course_id*,title*,passing_score:integer", "", "Question(text*,type[single/multiple/free_text])")]),
    ("clinicpro", ["ClinicPro", "clinic system", "patient records"], [
        ("Patient", "first_name*,last_name*,date_of_birth:date,insurance_id,status[active/inactive]", "", ""),
        ("Appointment", "patient_id*,provider_id*,start*:date-time,type[checkup/follow_up/telehealth],status[scheduled/checked_in/completed/cancelled/no_show]", "checkIn,cancel", ""),
        ("Prescription", "patient_id*,medication*,dosage,refills:integer,status[active/expired/cancelled]", "renew,cancel", ""),
        ("LabOrder", "patient_id*,test_code*,status[ordered/collected/resulted]", "", "Result(value,unit,flag[normal/high/low])"),
        ("Provider", "name*,specialty", "", "")]),
    ("vetcare", ["VetCare", "vet clinic"], [
        ("Pet", "name*,species[dog/cat/bird/rabbit/other],breed,owner_id*,date_of_birth:date", "", ""),
        ("Owner", "name*,phone,email", "", ""),
        ("Visit", "pet_id*,reason,date:date,status[booked/completed/cancelled]", "complete", ""),
        ("Vaccination", "pet_id*,vaccine*,given_on:date,due_on:date", "", "")]),
    ("propertyos", ["PropertyOS", "property management"], [
        ("Property", "name*,address,units_count:integer", "", ""),
        ("Unit", "property_id*,number*,bedrooms:integer,status[vacant/occupied/notice]", "", ""),
        ("Lease", "unit_id*,tenant_id*,start_date:date,end_date:date,rent:number,status[active/ended/pending]", "renew,terminate", ""),
        ("Tenant", "name*,email,phone", "", ""),
        ("WorkOrder", "unit_id*,category[plumbing/electrical/hvac/appliance/other],priority[low/normal/emergency],status[open/scheduled/completed]", "assign,complete", "")]),
    ("hotelcore", ["HotelCore", "hotel PMS", "front desk system"], [
        ("Reservation", "guest_id*,room_type_id*,arrival*:date,departure*:date,status[tentative/confirmed/checked_in/checked_out/cancelled]", "checkIn,checkOut,cancel", ""),
        ("Guest", "name*,email,loyalty_number", "", ""),
        ("Room", "number*,room_type_id,housekeeping_status[clean/dirty/inspected/out_of_order]", "markClean", ""),
        ("RoomType", "name*,base_rate:number", "", ""),
        ("Folio", "reservation_id*", "", "Charge(description*,amount*:number,posted_at:date-time)")]),
    ("tableos", ["TableOS", "restaurant system"], [
        ("Reservation", "party_size*:integer,time*:date-time,name*,phone,status[booked/seated/completed/no_show/cancelled]", "seat,cancel", ""),
        ("MenuItem", "name*,price:number,category,available:boolean", "markSoldOut", ""),
        ("KitchenOrder", "table_number,status[queued/cooking/ready/served]", "bump", ""),
        ("Table", "number*,seats:integer,area", "", "")]),
    ("freightly", ["Freightly", "freight forwarder"], [
        ("Booking", "origin_port*,destination_port*,mode[ocean/air/rail/truck],cargo_ready_date:date,status[requested/confirmed/in_transit/delivered]", "confirm,cancel", ""),
        ("Container", "booking_id*,number*,type[20GP/40GP/40HC/reefer],status[empty/loaded/on_vessel/discharged]", "", ""),
        ("CustomsDeclaration", "booking_id*,hs_codes:array,status[draft/filed/cleared/held]", "file", ""),
        ("Quote", "origin_port*,destination_port*,mode,weight_kg:number", "accept", "")]),
    ("lastmile", ["LastMile", "courier dispatch"], [
        ("Delivery", "address*,recipient_name,window_start:date-time,window_end:date-time,status[pending/assigned/out_for_delivery/delivered/failed],courier_id",
         "assign,markDelivered,markFailed", "ProofOfDelivery(photo_url,signature_name)"),
        ("Courier", "name*,phone,vehicle_type[bike/car/van],status[online/offline]", "", ""),
        ("Zone", "name*,polygon", "", "")]),
    ("warehouseiq", ["WarehouseIQ", "WMS", "warehouse floor system"], [
        ("Receipt", "warehouse_code*,supplier,expected_at:date,status[expected/receiving/received]", "close", ""),
        ("PickList", "warehouse_code*,order_ref,status[open/picking/picked/packed]", "release,complete", ""),
        ("Bin", "warehouse_code*,code*,zone,capacity:integer", "", ""),
        ("Wave", "warehouse_code*,status[planned/released/done]", "release", "")]),
    ("assetly", ["Assetly", "IT asset register"], [
        ("Asset", "tag*,type[laptop/monitor/phone/license],assigned_to,status[in_stock/assigned/repair/retired],purchase_date:date", "assign,checkIn,retire", ""),
        ("License", "software*,seats:integer,expires_on:date", "", ""),
        ("Location", "name*", "", "")]),
    ("expensio", ["Expensio", "expense tool", "expenses"], [
        ("Expense", "employee_id*,amount*:number,currency,category[travel/meals/lodging/software/other],date:date,status[draft/submitted/approved/rejected/reimbursed]",
         "submit,approve,reject", "Receipt(file_url*)"),
        ("Report", "title*,employee_id*,status[open/submitted/approved/paid]", "submit,approve", ""),
        ("Card", "holder_id*,limit:number,status[active/frozen/cancelled]", "freeze,unfreeze", ""),
        ("Policy", "name*,max_amount:number,category", "", "")]),
    ("formsly", ["Formsly", "survey tool"], [
        ("Form", "title*,status[draft/live/closed]", "publish,close", "Field(label*,type[text/choice/rating/email],required:boolean)"),
        ("Response", "form_id*,submitted_at:date-time,respondent_email", "", ""),
        ("Theme", "name*", "", "")]),
    ("chatdesk", ["ChatDesk", "live chat"], [
        ("Conversation", "inbox_id,contact_id,status[open/snoozed/resolved],assignee_id,channel[web/email/whatsapp/sms]", "assign,resolve,snooze,reopen", "Message(content*,private:boolean)"),
        ("Inbox", "name*,channel", "", ""),
        ("Contact", "name,email,phone", "", ""),
        ("CannedResponse", "short_code*,content*", "", "")]),
    ("kbase", ["KBase", "help center"], [
        ("Article", "title*,body,section_id,status[draft/published/archived],locale", "publish,archive", "Translation(locale*,title,body)"),
        ("Section", "name*,category_id", "", ""),
        ("Category", "name*", "", "")]),
    ("adstudio", ["AdStudio", "ad account", "ads manager"], [
        ("Campaign", "name*,objective[awareness/traffic/conversions],daily_budget:number,status[active/paused/ended],start_date:date", "pause,resume", ""),
        ("AdGroup", "campaign_id*,name*,bid:number,status[active/paused]", "", ""),
        ("Ad", "ad_group_id*,headline*,url,status[active/paused/rejected]", "pause", ""),
        ("Audience", "name*,size:integer", "", ""),
        ("PerformanceReport", "campaign_id,date_from:date,date_to:date,metrics:array", "", "")]),
    ("socialq", ["SocialQ", "social scheduler"], [
        ("Post", "channel_id*,text*,scheduled_at:date-time,status[draft/scheduled/published/failed]", "schedule,publishNow", ""),
        ("Channel", "network[twitter/linkedin/instagram/facebook],name*", "", "")]),
    ("analytix", ["Analytix", "product analytics"], [
        ("Dashboard", "name*,owner_id", "", "Chart(title*,query*,type[line/bar/table])"),
        ("Cohort", "name*,definition", "", ""),
        ("Funnel", "name*,steps:array", "compute", ""),
        ("Annotation", "date*:date,text*", "", "")]),
    ("flagship", ["Flagship", "feature flags"], [
        ("Flag", "key*,name,kind[boolean/multivariate],environment*,enabled:boolean", "toggle,archive", "Rule(segment_key,variation,rollout_percent:integer)"),
        ("Environment", "key*,name", "", ""),
        ("Segment", "key*,name,included:array", "", "")]),
    ("secretvault", ["SecretVault", "secrets manager"], [
        ("Secret", "path*,value*,rotation_days:integer", "rotate,disable", "Version(value*)"),
        ("Policy", "name*,rules*", "", ""),
        ("Token", "ttl_hours:integer,policies:array", "revoke", "")]),
    ("identra", ["Identra", "SSO", "identity provider"], [
        ("User", "email*,first_name,last_name,status[staged/active/suspended/deprovisioned]", "activate,suspend,unsuspend,resetPassword,resetMfa", ""),
        ("Group", "name*", "", "Member(user_id*)"),
        ("Application", "label*,sign_on_mode[saml/oidc]", "", "Assignment(user_id*,role)"),
        ("Policy", "name*,type[password/mfa/session]", "", "")]),
    ("printhub", ["PrintHub", "print shop"], [
        ("PrintJob", "file_url*,product[poster/business_card/flyer/mug],quantity:integer,status[received/printing/shipped]", "cancel", ""),
        ("Proof", "print_job_id*", "approve,reject", "")]),
    ("schoolos", ["SchoolOS", "school system"], [
        ("Student", "first_name*,last_name*,grade_level:integer,homeroom_id,status[enrolled/withdrawn/graduated]", "withdraw", ""),
        ("Section", "course_code*,teacher_id*,term", "", "Roster(student_id*)"),
        ("Attendance", "student_id*,date*:date,status[present/absent/tardy/excused]", "", ""),
        ("Grade", "student_id*,section_id*,assignment,score:number", "", ""),
        ("Guardian", "name*,phone,email", "", "")]),
    ("gymflow", ["GymFlow", "gym system"], [
        ("Member", "name*,email,plan[basic/premium/student],status[active/frozen/cancelled]", "freeze,unfreeze,cancel", ""),
        ("Class", "name*,instructor_id,starts_at:date-time,capacity:integer", "cancel", "Booking(member_id*)"),
        ("Instructor", "name*", "", ""),
        ("CheckIn", "member_id*,location_id", "", "")]),
    ("givetrack", ["GiveTrack", "donations", "fundraising"], [
        ("Donation", "donor_id*,amount*:number,currency,campaign_id,recurring:boolean,status[pending/succeeded/refunded]", "refund", ""),
        ("Donor", "name*,email", "", ""),
        ("Campaign", "name*,goal:number,ends_on:date", "close", ""),
        ("Pledge", "donor_id*,amount:number,frequency[monthly/quarterly/yearly],status[active/paused/cancelled]", "pause,cancel", "")]),
    ("matterbox", ["MatterBox", "legal matters", "practice management"], [
        ("Matter", "name*,client_id*,practice_area[litigation/corporate/ip/employment],status[open/pending/closed],responsible_attorney_id", "close", ""),
        ("Client", "name*", "", ""),
        ("TimeEntry", "matter_id*,user_id,hours*:number,rate:number,date:date,billable:boolean", "", ""),
        ("Deadline", "matter_id*,due_date*:date,description", "complete", "")]),
    ("claimsdesk", ["ClaimsDesk", "claims system", "insurance claims"], [
        ("Claim", "policy_id*,loss_date:date,type[auto/home/travel/health],status[submitted/under_review/approved/denied/paid],adjuster_id",
         "approve,deny,assign", "Document(file_url*,kind[photo/invoice/police_report/other])"),
        ("Policy", "holder_name*,product,premium:number,status[active/lapsed/cancelled]", "cancel,reinstate", ""),
        ("Adjuster", "name*,region", "", "")]),
    ("farmtrack", ["FarmTrack", "farm management"], [
        ("Field", "name*,area_ha:number,crop", "", ""),
        ("Planting", "field_id*,crop*,planted_on:date,status[planned/planted/harvested]", "harvest", ""),
        ("Task", "field_id,type[spray/irrigate/fertilize/scout],due_date:date,status[open/done]", "complete", ""),
        ("Equipment", "name*,status[available/in_use/repair]", "", "")]),
    ("sitebuild", ["SiteBuild", "construction management", "job site"], [
        ("Project", "name*,address,status[bidding/active/closed]", "", ""),
        ("Rfi", "project_id*,subject*,status[draft/open/answered/closed],due_date:date", "answer,close", ""),
        ("Submittal", "project_id*,spec_section,status[pending/approved/rejected/revise]", "approve,reject", ""),
        ("DailyLog", "project_id*,date*:date,weather,crew_count:integer", "", ""),
        ("PunchItem", "project_id*,location,status[open/ready_for_review/closed],assignee_id", "close", "")]),
    ("voxline", ["Voxline", "phone system", "VoIP"], [
        ("Number", "phone_number*,type[local/toll_free],status[active/released]", "release", ""),
        ("Call", "from,to,status[completed/missed/voicemail],started_at:date-time", "", ""),
        ("Voicemail", "number_id", "markRead", ""),
        ("Extension", "number*:integer,user_id", "", ""),
        ("CallQueue", "name*,strategy[ring_all/round_robin]", "", "Agent(user_id*)")]),
    ("notifyr", ["Notifyr", "notification service"], [
        ("Notification", "channel[email/sms/push],recipient*,template_id,status[queued/sent/failed]", "cancel", ""),
        ("Template", "name*,channel*,body*", "", ""),
        ("Subscriber", "external_id*,email,phone", "", "Preference(topic_key*,enabled:boolean)"),
        ("Topic", "key*,name", "", "")]),
    ("dataport", ["DataPort", "ETL", "data pipeline"], [
        ("Connection", "type[postgres/mysql/salesforce/s3],name*,status[connected/broken]", "test", ""),
        ("Sync", "connection_id*,schedule,status[idle/running/failed]", "trigger,cancel", "Run(status[running/succeeded/failed],started_at:date-time)"),
        ("Destination", "name*,type[snowflake/bigquery/redshift]", "", ""),
        ("Transformation", "name*,sql*", "", "")]),
]

# Every service also exposes users, webhooks and an audit log.
COMMON: list[R] = [
    ("User", "email*,name,role[admin/member/viewer],status[active/invited/disabled]", "disable", ""),
    ("Webhook", "url*,events:array,active:boolean", "test", ""),
]

PLURAL = {"Entry": "Entries", "Policy": "Policies", "Class": "Classes", "Activity": "Activities",
          "Property": "Properties", "Attendance": "Attendance", "Proof": "Proofs", "Sync": "Syncs",
          "Search": "Searches", "Address": "Addresses", "SlaPolicy": "SlaPolicies",
          "RetentionPolicy": "RetentionPolicies", "EscalationPolicy": "EscalationPolicies",
          "Company": "Companies", "Category": "Categories", "Delivery": "Deliveries",
          "ProofOfDelivery": "ProofsOfDelivery", "Equipment": "Equipment", "JournalEntry": "JournalEntries",
          "TimeEntry": "TimeEntries", "Box": "Boxes", "Bus": "Buses", "Inbox": "Inboxes",
          "Quiz": "Quizzes", "Requisition": "Requisitions", "Deadline": "Deadlines",
          "Reservation": "Reservations", "Preference": "Preferences"}


def plural(name: str) -> str:
    if name in PLURAL:
        return PLURAL[name]
    if name.endswith("y") and name[-2:-1] not in "aeiou":
        return name[:-1] + "ies"
    if name.endswith(("s", "x", "ch", "sh")):
        return name + "es"
    return name + "s"


def words(camel: str) -> str:
    """``LineItem`` -> ``line item``."""
    return re.sub(r"(?<=[a-z0-9])(?=[A-Z])", " ", camel).lower()


def snake(camel: str) -> str:
    return words(camel).replace(" ", "_")


def fields(spec: str) -> list[dict]:
    out = []
    for item in filter(None, spec.split(",")):
        m = re.fullmatch(r"(\w+)(\*)?(?::([\w-]+))?(?:\[([\w/]+)\])?", item)
        assert m, item
        name, req, kind, enum = m.groups()
        f = {"name": name, "required": bool(req), "type": kind or "string"}
        if enum:
            f["enum"] = enum.split("/")
        out.append(f)
    return out


def prop(f: dict, desc: str | None = None) -> dict:
    kind = f["type"]
    p: dict = {"type": {"date": "string", "date-time": "string"}.get(kind, kind)}
    if kind in ("date", "date-time"):
        p["format"] = kind
    if kind == "array":
        p["items"] = {"type": "string"}
    if "enum" in f:
        p["enum"] = f["enum"]
    if desc:
        p["description"] = desc
    return p


def schema(props: dict, required: list[str]) -> dict:
    s: dict = {"type": "object", "properties": props}
    if required:
        s["required"] = required
    return s


def pick(key: str, n: int) -> int:
    return zlib.crc32(key.encode()) % n


def summary(verb: str, noun: str, nouns: str, key: str) -> str:
    """A spec summary, terse as generated specs are: the choice is fixed by a hash of the name."""
    article = "an" if noun[0] in "aeiou" else "a"
    k = pick(key, 6)
    full = {"list": f"List {nouns}", "get": f"Retrieve {article} {noun}", "create": f"Create {article} {noun}",
            "update": f"Update {article} {noun}", "delete": f"Delete {article} {noun}"}
    terse = {"list": "List", "get": "Get by ID", "create": "Create", "update": "Update", "delete": "Delete"}
    if verb not in full:  # a custom action
        act = words(verb)
        return act.capitalize() if k == 0 else f"{act.capitalize()} {article} {noun}"
    if k <= 1:
        return terse[verb]
    if k == 5 and verb == "list":
        return f"Returns a paginated list of {nouns}."
    return full[verb]


ACTION_PARAMS = {
    "void": "reason", "cancel": "reason", "reject": "reason", "deny": "reason", "terminate": "reason",
    "rescind": "reason", "markLost": "reason", "decommission": "reason", "markFailed": "reason",
    "reschedule": "new_start:date-time", "assign": "assignee_id*", "reassign": "assignee_id*",
    "resize": "size*", "attach": "server_id*", "transfer": "new_owner*", "merge": "target_id*",
    "adjust": "delta*:integer,reason", "reroute": "new_address*", "refund": "amount:number,reason",
    "snooze": "until*:date-time", "requestReview": "reviewers*:array", "schedule": "at*:date-time",
    "send": "", "advance": "to_stage", "submitEvidence": "evidence*", "renew": "new_end_date:date",
    "answer": "response*", "pay": "paid_on:date,amount:number", "markDelivered": "delivered_at:date-time",
    "capture": "amount:number", "markWon": "amount:number", "receive": "received_at:date-time",
}


def resource_ops(service: str, res: R) -> list[dict]:
    name, spec, actions, subs = res
    fs = fields(spec)
    noun, nouns = words(name), words(plural(name))
    idp = f"{snake(name)}_id"
    id_prop = {"type": "string", "description": f"ID of the {noun}"}
    tools = []

    def add(op: str, verb: str, props: dict, required: list[str], n=noun, ns=nouns):
        tool = f"{service}_{op}"
        assert NAME_RE.match(tool), tool
        tools.append({"name": tool, "description": summary(verb, n, ns, tool), "domain": service,
                      "parameters": schema(props, required)})

    # list: filters from the fields
    lp: dict = {}
    for f in fs:
        fn, fw = f["name"], words(f["name"]).replace(" id", "")
        if "enum" in f:
            lp[fn] = prop(f, f"Only return {nouns} with this {words(fn)}")
        elif fn.endswith("_id") or fn.endswith("_code"):
            lp[fn] = prop(f, f"Filter by {fw}")
        elif f["type"] in ("date", "date-time"):
            lp[f"{fn}_before"] = prop(f, f"Only {nouns} with {words(fn)} before this date (ISO 8601)")
            lp[f"{fn}_after"] = prop(f, f"Only {nouns} with {words(fn)} on or after this date")
        elif f["type"] == "boolean":
            lp[fn] = prop(f)
    if any(f["name"] in ("name", "title", "subject", "short_description", "email", "code", "sku") for f in fs):
        lp["q"] = {"type": "string", "description": "Search text"}
    lp["limit"] = {"type": "integer", "description": "Max results (1-100)"}
    lp["cursor"] = {"type": "string"}
    add(f"list{plural(name)}", "list", lp, [])
    add(f"get{name}", "get", {idp: id_prop}, [idp])
    body = {f["name"]: prop(f) for f in fs}
    add(f"create{name}", "create", body, [f["name"] for f in fs if f["required"]])
    add(f"update{name}", "update", {idp: id_prop, **body}, [idp])
    add(f"delete{name}", "delete", {idp: id_prop}, [idp])
    for act in filter(None, actions.split(",")):
        ap = {idp: id_prop}
        req = [idp]
        for f in fields(ACTION_PARAMS.get(act, "")):
            ap[f["name"]] = prop(f)
            if f["required"]:
                req.append(f["name"])
        add(f"{act}{name}", act, ap, req)
    for sub in filter(None, subs.split(";")):
        m = re.fullmatch(r"(\w+)\((.*)\)", sub)
        sname, sspec = m.groups()
        sf = fields(sspec)
        sn, sns = words(sname), words(plural(sname))
        sid = f"{snake(sname)}_id"
        sbody = {f["name"]: prop(f) for f in sf}
        sid_prop = {"type": "string", "description": f"ID of the {sn}"}
        add(f"list{name}{plural(sname)}", "list", {idp: id_prop, "limit": {"type": "integer"}}, [idp], sn, sns)
        add(f"add{name}{sname}", "create", {idp: id_prop, **sbody}, [idp] + [f["name"] for f in sf if f["required"]], sn, sns)
        add(f"update{name}{sname}", "update", {idp: id_prop, sid: sid_prop, **sbody}, [idp, sid], sn, sns)
        add(f"remove{name}{sname}", "delete", {idp: id_prop, sid: sid_prop}, [idp, sid], sn, sns)
    return tools


def build_registry() -> tuple[list[dict], dict[str, list[str]]]:
    tools: list[dict] = []
    aliases: dict[str, list[str]] = {}
    for service, als, resources in SERVICES:
        aliases[service] = als
        own = {r[0] for r in resources}
        for res in resources + [c for c in COMMON if c[0] not in own]:
            tools.extend(resource_ops(service, res))
        for op, summ, props in [
                ("listAuditEvents", "List audit events", {"actor_id": {"type": "string"}, "action": {"type": "string"},
                                                          "occurred_after": {"type": "string", "format": "date-time"},
                                                          "limit": {"type": "integer"}}),
                ("getAuditEvent", "Get audit event", {"audit_event_id": {"type": "string"}})]:
            tools.append({"name": f"{service}_{op}", "description": summ, "domain": service,
                          "parameters": schema(props, ["audit_event_id"] if op.startswith("get") else [])})
    names = [t["name"] for t in tools]
    dup = {n for n in names if names.count(n) > 1}
    assert not dup, dup
    flat = [a.lower() for als in aliases.values() for a in als]
    assert len(flat) == len(set(flat)), "an alias names two services"
    return tools, aliases


# ---------------------------------------------------------------------------------------------
# Requests, hand-written: (category, text, expected). Categories: single, multi_within (several
# operations of one service), multi_cross (several services).
# ---------------------------------------------------------------------------------------------

REQUESTS: list[tuple[str, str, list[str]]] = [
    # ---- single ----
    ("single", "void invoice INV-2231 for Acme's Berlin office in the billing system, they were double charged",
     ["billingco_voidInvoice"]),
    ("single", "On Shipfast, which shipments heading to warehouse WH-07 are running late?",
     ["shipfast_listShipments"]),
    ("single", "Acme wants to stop their subscription at the end of the month. Can you cancel sub_88213 in Billingco?",
     ["billingco_cancelSubscription"]),
    ("single", "Put a $120 credit against invoice INV-1978 in Billingco, the customer got the wrong product.",
     ["billingco_createCreditNote"]),
    ("single", "The March accrual journal entry JE-5521 in Ledgerly was booked twice, please undo it.",
     ["ledgerly_reverseJournalEntry"]),
    ("single", "Which supplier bills are still waiting to be paid in the general ledger? Just the ones due before June 1.",
     ["ledgerly_listBills"]),
    ("single", "A customer says they were charged twice for order 7731. Give back the $49.90 on payment pay_3KQ9 through Payflow.",
     ["payflow_createRefund"]),
    ("single", "Do we have any chargebacks on Payflow that still need a response from us?",
     ["payflow_listDisputes"]),
    ("single", "We found 12 damaged units of SKU BX-200 in the Leeds warehouse, knock them off the stock level in Stockroom.",
     ["stockroom_adjustStockLevel"]),
    ("single", "The transfer TR-448 from Rotterdam arrived at our Prague site this morning, mark it as received in the inventory system.",
     ["stockroom_receiveTransfer"]),
    ("single", "Customer moved house. Shipment SHP-90211 on Shipfast needs to go to 14 Rue Oberkampf, Paris instead.",
     ["shipfast_rerouteShipment"]),
    ("single", "Book a UPS collection from our Leicester dock for next Tuesday in the shipping platform.",
     ["shipfast_createPickup"]),
    ("single", "Van KX19 ABC needs new tyres next week, put that in Fleetline.",
     ["fleetline_createMaintenanceOrder"]),
    ("single", "Marta Lindqvist is going on parental leave from 1 September to 28 February. Log it in PeopleHQ.",
     ["peoplehq_createTimeOffRequest"]),
    ("single", "Approve Jonas's vacation request TOR-311 in the HR system, his manager is out.",
     ["peoplehq_approveTimeOffRequest"]),
    ("single", "Who in the HR system is currently on leave in the engineering department (dept_eng)?",
     ["peoplehq_listEmployees"]),
    ("single", "The October pay run is checked, sign it off in PayrollPro so it can go out.",
     ["payrollpro_approvePayRun"]),
    ("single", "Give Priya Shah a 2,000 euro spot bonus for the migration work, paid with the next payroll.",
     ["payrollpro_createBonus"]),
    ("single", "Move candidate Tom Becker's application APP-7781 to the onsite interview stage in Hireloop.",
     ["hireloop_advanceApplication"]),
    ("single", "The panel for application APP-6620 can't make Thursday. Push the interview in the recruiting system to Monday 10am.",
     ["hireloop_rescheduleInterview"]),
    ("single", "Ticket 48213 on Deskly is the same issue as 48190, combine them.",
     ["deskly_mergeTicket"]),
    ("single", "Show me every urgent ticket in the support desk that's still open.",
     ["deskly_listTickets"]),
    ("single", "Raise a sev2 in the IT service desk: the VPN gateway in Frankfurt keeps dropping connections.",
     ["ticketflow_createIncident"]),
    ("single", "The firewall upgrade change CHG-1044 is approved by CAB, record that in TicketFlow.",
     ["ticketflow_approveChangeRequest"]),
    ("single", "Take the old pricing page down from the company website, we'll bring it back later.",
     ["pagekit_unpublishPage"]),
    ("single", "Make the blog post about our Series B go live Thursday at 9:00 CET on PageKit.",
     ["pagekit_schedulePost"]),
    ("single", "/old-careers should send people to /jobs on the company website from now on.",
     ["pagekit_createRedirect"]),
    ("single", "Sensor SN-44817 at the Leipzig plant is stuck, restart it remotely via SensorNet.",
     ["sensornet_rebootDevice"]),
    ("single", "Any critical alarms on the IoT platform nobody has acknowledged yet?",
     ["sensornet_listAlarms"]),
    ("single", "The tenant at 22 Birch Lane moved out; cut off gas meter GM-55102 in MeterWise.",
     ["meterwise_disconnectMeter"]),
    ("single", "We lost the Globex deal to a competitor, close it as lost in the CRM. Price was the reason.",
     ["crmly_markLostDeal"]),
    ("single", "Which deals in our CRM are expected to close before the end of the quarter and still in negotiation?",
     ["crmly_listDeals"]),
    ("single", "Fire off a test of the spring newsletter campaign CMP-212 to me before we send it for real, via MailBlast.",
     ["mailblast_sendTestCampaign"]),
    ("single", "Mrs Okafor can't make her 3pm haircut on Friday. Move appointment APT-9082 in BookIt to Saturday 11am.",
     ["bookit_rescheduleAppointment"]),
    ("single", "Sarah Kim just walked into the venue, check her in for Eventra event EV-301.",
     ["eventra_checkInAttendee"]),
    ("single", "Order #10442 in the web shop was a fraud attempt, cancel it.",
     ["shopcart_cancelOrder"]),
    ("single", "Create a 15% off code SPRING15 for the online store starting March 1.",
     ["shopcart_createDiscount"]),
    ("single", "Receipt S-88301 rang up on till 3 by mistake; void that sale in PosTerm.",
     ["posterm_voidSale"]),
    ("single", "We've had three late deliveries from supplier SUP-014. Block them in Procura for now.",
     ["procura_blockSupplier"]),
    ("single", "What purchase orders are waiting for approval in the purchasing system?",
     ["procura_listPurchaseOrders"]),
    ("single", "In Projectly, what tasks are blocked on the website relaunch project (prj_221)?",
     ["projectly_listTasks"]),
    ("single", "Ship it: merge pull request #482 on GitForge into main.",
     ["gitforge_mergePullRequest"]),
    ("single", "The nightly build on BuildRun failed because of a flaky test. Run pipeline 99102 again.",
     ["buildrun_retryPipeline"]),
    ("single", "Our API box api-prod-2 on CloudHost is out of memory, move it to the 8GB size.",
     ["cloudhost_resizeServer"]),
    ("single", "Point status.example.com at 203.0.113.10 on CloudHost.",
     ["cloudhost_createDnsRecord"]),
    ("single", "We're doing planned maintenance Sunday 02:00-04:00 UTC. Tell Watchtower so it doesn't page everyone.",
     ["watchtower_createMaintenanceWindow"]),
    ("single", "I'm on it, stop the pager for alert AL-7730 in OnCallr.",
     ["oncallr_acknowledgeAlert"]),
    ("single", "Give the auditors at kpmg-audit@example.com read-only access to the FY24 ledger document in DocSafe until the end of the month.",
     ["docsafe_createShare"]),
    ("single", "The client never got the contract email. Send envelope ENV-5521 again through SignWise.",
     ["signwise_resendEnvelope"]),
    ("single", "Who on the training platform hasn't finished the mandatory security course yet? Course id crs_sec101.",
     ["learnhub_listEnrollments"]),
    ("single", "Mr Alvarez needs his lisinopril refilled, renew prescription RX-20331 in the clinic system.",
     ["clinicpro_renewPrescription"]),
    ("single", "Which dogs at the vet clinic are due for their rabies shot this month?",
     ["vetcare_listVaccinations"]),
    ("single", "Unit 4B at Maple Court has a leaking pipe under the sink, open an emergency job in PropertyOS.",
     ["propertyos_createWorkOrder"]),
    ("single", "Room 512 has been cleaned, update housekeeping in HotelCore.",
     ["hotelcore_markCleanRoom"]),
    ("single", "We're out of the sea bass tonight, mark it sold out in TableOS.",
     ["tableos_markSoldOutMenuItem"]),
    ("single", "Which customs filings are held by customs at the moment on Freightly?",
     ["freightly_listCustomsDeclarations"]),
    ("single", "Nobody was home at 9 Elm Road, flag delivery DLV-3391 as failed in LastMile.",
     ["lastmile_markFailedDelivery"]),
    ("single", "Release wave W-2207 to the floor in WarehouseIQ so the pickers can start.",
     ["warehouseiq_releaseWave"]),
    ("single", "Laptop tag LT-0932 came back from Jana, she left the company. Check it back in in Assetly.",
     ["assetly_checkInAsset"]),
    ("single", "My corporate card got stolen in Madrid, freeze card CRD-771 in Expensio right now!",
     ["expensio_freezeCard"]),
    ("single", "How many people have filled in the customer feedback survey (form F-19) on Formsly since Monday?",
     ["formsly_listResponses"]),
    ("single", "Hand the WhatsApp conversation with the angry customer, conv_8812, over to Lina in ChatDesk.",
     ["chatdesk_assignConversation"]),
    ("single", "Our refund policy help article is outdated, take it off the help center but keep it around.",
     ["kbase_archiveArticle"]),
    ("single", "Stop spending on the Black Friday campaign in AdStudio, it's over.",
     ["adstudio_pauseCampaign"]),
    ("single", "Turn on the new_checkout flag in production in Flagship.",
     ["flagship_toggleFlag"]),
    ("single", "The prod database password in SecretVault was in a screenshot on Slack, rotate it now.",
     ["secretvault_rotateSecret"]),
    ("single", "Jamie lost their phone, clear their MFA factors in Identra so they can enroll a new one.",
     ["identra_resetMfaUser"]),
    ("single", "The poster proof for job PJ-2210 looks good, approve it at PrintHub.",
     ["printhub_approveProof"]),
    ("single", "Mark Leo Carter absent today in the school system, his mum called in sick for him.",
     ["schoolos_createAttendance"]),
    ("single", "Member Nadia Haddad is travelling for 2 months, put her gym membership on hold in GymFlow.",
     ["gymflow_freezeMember"]),
    ("single", "A donor asked to stop their monthly gift for now; pause pledge PL-3310 in GiveTrack.",
     ["givetrack_pausePledge"]),
    ("single", "Log 2.5 billable hours on the Henderson litigation matter in MatterBox for drafting the motion.",
     ["matterbox_createTimeEntry"]),
    ("single", "Claim CLM-77120 for the hail damage checks out, approve it in the claims system.",
     ["claimsdesk_approveClaim"]),
    ("single", "North paddock needs spraying for aphids on Thursday, add that to FarmTrack.",
     ["farmtrack_createTask"]),
    ("single", "Which RFIs on the Harbor Tower job site are still open and past due?",
     ["sitebuild_listRfis"]),
    ("single", "We don't need the toll-free number 0800 555 0100 on Voxline anymore, release it.",
     ["voxline_releaseNumber"]),
    ("single", "The Salesforce sync on DataPort is stuck at running for 6 hours, kill it.",
     ["dataport_cancelSync"]),
    # ---- multi_within ----
    ("multi_within", "Bill Initech for the March consulting in Billingco: make a draft invoice for customer cus_4471, add 40 hours at 150 and the travel costs as lines, then finalize it and email it to them.",
     ["billingco_createInvoice", "billingco_addInvoiceLineItem", "billingco_finalizeInvoice", "billingco_sendInvoice"]),
    ("multi_within", "Invoice INV-3310 in the billing system has the wrong quantity on the second line, should be 12 not 21. Fix the line item and resend it to the customer.",
     ["billingco_updateInvoiceLineItem", "billingco_sendInvoice"]),
    ("multi_within", "Stockroom: we need 200 units of SKU KT-33 moved from Rotterdam (WH-02) to Prague (WH-05). Set up the transfer with that line and mark it shipped.",
     ["stockroom_createTransfer", "stockroom_addTransferLine", "stockroom_shipTransfer"]),
    ("multi_within", "Shipment SHP-7730 on Shipfast is cancelled because the order was refunded. Cancel it and void its label LBL-7730 so we aren't charged.",
     ["shipfast_cancelShipment", "shipfast_voidLabel"]),
    ("multi_within", "Hireloop: Anna Reyes accepted verbally. Draft an offer on application APP-8812 at 95k starting 1 July, send it, and move her application to offer stage.",
     ["hireloop_createOffer", "hireloop_sendOffer", "hireloop_advanceApplication"]),
    ("multi_within", "Ticket 50122 on Deskly is a billing bug that needs engineering. Leave an internal note explaining the repro steps and escalate it.",
     ["deskly_addTicketComment", "deskly_escalateTicket"]),
    ("multi_within", "PeopleHQ: Daniel Roth's last day is 30 June. Terminate him and close his position POS-118 so we don't backfill automatically.",
     ["peoplehq_terminateEmployee", "peoplehq_updatePosition"]),
    ("multi_within", "On the IoT platform, the humidity sensor HX-221 at Site Rotterdam is flapping. Look at its last readings, and if they're junk clear alarm ALM-9921.",
     ["sensornet_listDeviceReadings", "sensornet_clearAlarm"]),
    ("multi_within", "Make a new landing page 'Summer Sale' at /summer on PageKit based on last year's one (page pg_311, copy it), and publish it.",
     ["pagekit_duplicatePage", "pagekit_publishPage"]),
    ("multi_within", "In the CRM, log a call with Maria at Vandelay (contact c_5531) about the renewal, and move the Vandelay Renewal deal to negotiation.",
     ["crmly_createActivity", "crmly_updateDeal"]),
    ("multi_within", "MailBlast: add jo@example.org to the Product Updates list, then schedule campaign CMP-240 for Tuesday 8am.",
     ["mailblast_addListMember", "mailblast_scheduleCampaign"]),
    ("multi_within", "Our Eventra concert EV-410 got rained out. Cancel the event and refund order ORD-55102 that the organiser asked about first.",
     ["eventra_cancelEvent", "eventra_refundOrder"]),
    ("multi_within", "In ShopCart, the blue XL hoodie is back in stock: set the variant's inventory to 40 and make the product active again.",
     ["shopcart_updateProductVariant", "shopcart_updateProduct"]),
    ("multi_within", "Procura: raise a PO to supplier SUP-220 for 500 pallets of cardboard boxes at 4.20 each, then submit it for approval.",
     ["procura_createPurchaseOrder", "procura_addPurchaseOrderLine", "procura_submitPurchaseOrder"]),
    ("multi_within", "On GitForge, open a PR from feature/sso into main in the web-app repo and ask Kai and Ruth to review it.",
     ["gitforge_createPullRequest", "gitforge_requestReviewPullRequest"]),
    ("multi_within", "CloudHost: before I resize db-1, take a snapshot of it, then power it off.",
     ["cloudhost_addServerSnapshot", "cloudhost_powerOffServer"]),
    ("multi_within", "HotelCore: reservation R-88120 just arrived, check them in, and add a 35 euro minibar charge to their folio.",
     ["hotelcore_checkInReservation", "hotelcore_addFolioCharge"]),
    ("multi_within", "On LastMile, give delivery DLV-4410 to courier Sam (cr_19) and when he's done record the photo proof of delivery.",
     ["lastmile_assignDelivery", "lastmile_addDeliveryProofOfDelivery"]),
    ("multi_within", "Expensio: I spent 64.50 on a client dinner in Lyon yesterday. Log the expense with the receipt photo and submit it.",
     ["expensio_createExpense", "expensio_addExpenseReceipt", "expensio_submitExpense"]),
    ("multi_within", "In Identra, suspend contractor alex@vendor.example and take them out of the Engineering group.",
     ["identra_suspendUser", "identra_removeGroupMember"]),
    ("multi_within", "ClinicPro: patient Grace Lee (pt_4410) is here for her 10:30, check her in, and order a lipid panel for her.",
     ["clinicpro_checkInAppointment", "clinicpro_createLabOrder"]),
    ("multi_within", "PropertyOS: the lease for unit 12A ends next month; the tenant wants another year. Renew lease L-2290 and bump the rent to 1,450.",
     ["propertyos_renewLease", "propertyos_updateLease"]),
    ("multi_within", "In the claims system, assign claim CLM-80311 to adjuster Ruiz and attach the police report the customer emailed.",
     ["claimsdesk_assignClaim", "claimsdesk_addClaimDocument"]),
    ("multi_within", "SiteBuild: the architect answered RFI 117 on Harbor Tower about the stair railing. Record the answer and close it, and add a punch item for the railing height in stairwell B.",
     ["sitebuild_answerRfi", "sitebuild_closeRfi", "sitebuild_createPunchItem"]),
    ("multi_within", "DataPort: the Postgres connection broke after the password change. Test connection con_31 again and then kick off sync sy_88.",
     ["dataport_testConnection", "dataport_triggerSync"]),
    ("multi_within", "Flagship: create a rule on new_checkout to roll it out to 10% of the beta-testers segment, and add the EU customers segment too.",
     ["flagship_addFlagRule", "flagship_createSegment"]),
    ("multi_within", "In the on-call tool, I'll be at a wedding Saturday. Put Lee on an override for my shift on the Primary schedule, and snooze alert AL-8812 until Monday.",
     ["oncallr_addScheduleOverride", "oncallr_snoozeAlert"]),
    ("multi_within", "Payflow: capture the authorized 320 dollar payment pay_77Q, then pay out our balance to the business account.",
     ["payflow_capturePayment", "payflow_createPayout"]),
    ("multi_within", "SchoolOS: new student Mia Novak joins grade 4; add her, and put her on the roster of Ms Patel's math section SEC-4M.",
     ["schoolos_createStudent", "schoolos_addSectionRoster"]),
    ("multi_within", "Freightly: the quote Q-5511 for Shanghai to Hamburg by ocean looks good. Accept it and file the customs declaration for booking BK-9920.",
     ["freightly_acceptQuote", "freightly_fileCustomsDeclaration"]),
    # ---- multi_cross ----
    ("multi_cross", "Customer Acme Berlin is churning. Cancel their subscription in Billingco and mark the Acme expansion deal as lost in the CRM.",
     ["billingco_cancelSubscription", "crmly_markLostDeal"]),
    ("multi_cross", "New hire Lucas Meyer starts Monday. Add him to PeopleHQ, create his account in Identra, and assign him laptop LT-1120 in Assetly.",
     ["peoplehq_createEmployee", "identra_createUser", "assetly_assignAsset"]),
    ("multi_cross", "The checkout outage: open a sev1 incident in the IT service desk, acknowledge the pager alert AL-9012 in OnCallr, and post a status page update incident in Watchtower.",
     ["ticketflow_createIncident", "oncallr_acknowledgeAlert", "watchtower_createIncident"]),
    ("multi_cross", "Order #10551 in the web shop is packed. Mark it fulfilled and create the DHL shipment for it on Shipfast.",
     ["shopcart_fulfillOrder", "shipfast_createShipment"]),
    ("multi_cross", "We're low on SKU GL-9 in Stockroom. What's the stock level across warehouses, and raise a purchase order in Procura to supplier SUP-031 for 1,000 units.",
     ["stockroom_listStockLevels", "procura_createPurchaseOrder"]),
    ("multi_cross", "Check in SignWise that Omar Said's offer envelope ENV-6620 is fully signed, then mark his Hireloop application as hired and create him as an employee in the HR system starting 1 August.",
     ["signwise_getEnvelope", "hireloop_advanceApplication", "peoplehq_createEmployee"]),
    ("multi_cross", "A customer complained in ChatDesk (conv_9931) that their refund never arrived. Check payment pay_55A on Payflow and refund it, then resolve the chat.",
     ["payflow_getPayment", "payflow_createRefund", "chatdesk_resolveConversation"]),
    ("multi_cross", "Ship the v2.4 release: publish the draft release on GitForge, flip the new_dashboard flag on in Flagship, and write a help center article announcing it.",
     ["gitforge_publishRelease", "flagship_toggleFlag", "kbase_createArticle"]),
    ("multi_cross", "Van KX19 ABC broke down. Mark it in maintenance in Fleetline and reassign today's deliveries DLV-5001 in LastMile to courier cr_07.",
     ["fleetline_updateVehicle", "lastmile_assignDelivery"]),
    ("multi_cross", "The Q3 bonus for Priya needs to go through payroll, and she filed travel expenses for the offsite; approve expense EXP-4410 in Expensio too.",
     ["payrollpro_approveBonus", "expensio_approveExpense"]),
    ("multi_cross", "Our biggest donor just gave 50k in GiveTrack; find the donation and send a thank-you email through Notifyr using the thank_you template.",
     ["givetrack_listDonations", "notifyr_createNotification"]),
    ("multi_cross", "Water leak in 4B at Maple Court: open an emergency work order in PropertyOS and file a home claim in ClaimsDesk under policy POL-7781.",
     ["propertyos_createWorkOrder", "claimsdesk_createClaim"]),
    ("multi_within", "Seating the Patel party of 6 now in TableOS, and the kitchen ticket for table 12 is done, bump it.",
     ["tableos_seatReservation", "tableos_bumpKitchenOrder"]),
    ("multi_cross", "Container MSKU 778812 was discharged in Hamburg on Freightly; create the inbound receipt for it at warehouse HAM-1 in WarehouseIQ.",
     ["freightly_updateContainer", "warehouseiq_createReceipt"]),
    ("multi_cross", "For the Q2 board deck: generate an AdStudio performance report on the spring campaign for April to June, and have Analytix crunch the signup funnel.",
     ["adstudio_createPerformanceReport", "analytix_computeFunnel"]),
    ("multi_cross", "Schedule the launch post on LinkedIn through SocialQ for Thursday 9am, and schedule the same announcement newsletter campaign in MailBlast for the same time.",
     ["socialq_schedulePost", "mailblast_scheduleCampaign"]),
    ("multi_cross", "The leaked API token: revoke token tok_99 in SecretVault and check the Identra audit log for what that account did in the last 24 hours.",
     ["secretvault_revokeToken", "identra_listAuditEvents"]),
    ("multi_within", "Meter GM-55102 is reconnected after the outage; mark it reconnected in MeterWise and close out outage OUT-311 as restored.",
     ["meterwise_reconnectMeter", "meterwise_updateOutage"]),
    ("multi_cross", "A vendor invoice for 12,400 from Northwind came in. Record the bill in Ledgerly, and mark PO-8812 received in Procura.",
     ["ledgerly_createBill", "procura_receivePurchaseOrder"]),
    ("multi_cross", "Print 500 flyers for the Eventra launch party (event EV-520) at PrintHub using https://files.example.com/flyer.pdf, and publish the event so tickets go on sale.",
     ["printhub_createPrintJob", "eventra_publishEvent"]),
    ("multi_cross", "Our gym's spin class tonight is cancelled, the instructor is sick. Cancel class CL-220 in GymFlow and text the booked members via Notifyr.",
     ["gymflow_cancelClass", "notifyr_createNotification"]),
    ("multi_cross", "Warehouse audit for Stockroom site WH-05: start a stock count there, and in WarehouseIQ list the bins in zone C so the team knows where to go.",
     ["stockroom_createStockCount", "warehouseiq_listBins"]),
    ("multi_cross", "The BuildRun deploy pipeline for the payments service passed. Merge PR #501 on GitForge and create the change request in TicketFlow for tonight's window.",
     ["gitforge_mergePullRequest", "ticketflow_createChangeRequest"]),
    ("multi_cross", "The vet clinic visit for Biscuit (pet P-3310) is done; mark it complete, and book his follow-up grooming in BookIt for two weeks later.",
     ["vetcare_completeVisit", "bookit_createAppointment"]),
    ("multi_cross", "Court deadline moved: in MatterBox mark the Henderson filing deadline DL-221 done, and upload the signed motion to DocSafe as a new version of document DOC-4410.",
     ["matterbox_completeDeadline", "docsafe_addDocumentVersion"]),
]


def check(requests, tools: list[dict], aliases: dict[str, list[str]]) -> None:
    """Every expected tool exists and the text names its service (one of its aliases)."""
    names = {t["name"] for t in tools}
    for i, (_, text, expected) in enumerate(requests, 1):
        assert len(set(expected)) == len(expected), (i, expected)
        for name in expected:
            assert name in names, f"request {i}: unknown tool {name}"
            service = name.split("_", 1)[0]
            assert any(a.lower() in text.lower() for a in aliases[service]), \
                f"request {i}: the text must name the service of {name}: one of {aliases[service]}"


def assign_splits(categories: list[str]) -> list[str]:
    """toolsel.datasets.assign_splits: alternate dev/test within each category."""
    seen: dict[str, int] = {}
    out = []
    for cat in categories:
        i = seen.get(cat, 0)
        seen[cat] = i + 1
        out.append("dev" if i % 2 == 0 else "test")
    return out


def main() -> None:
    tools, aliases = build_registry()
    check(REQUESTS, tools, aliases)
    splits = assign_splits([c for c, _, _ in REQUESTS])
    queries = []
    for i, ((cat, text, expected), split) in enumerate(zip(REQUESTS, splits), 1):
        rec = {"id": f"oas-{i:03d}", "query": text, "expected": expected, "split": split, "category": cat}
        if len(expected) > 1:
            rec["tags"] = ["multi"]
        queries.append(rec)
    (HERE / "registry.json").write_text(
        "[\n" + ",\n".join(json.dumps(t, ensure_ascii=False) for t in tools) + "\n]\n", encoding="utf-8")
    (HERE / "queries.jsonl").write_text(
        "".join(json.dumps(q, ensure_ascii=False) + "\n" for q in queries), encoding="utf-8")
    multi = sum(len(q["expected"]) > 1 for q in queries)
    print(f"wrote {HERE / 'registry.json'} ({len(tools)} tools, {len(aliases)} services) and "
          f"{HERE / 'queries.jsonl'} ({len(queries)} requests, {multi} multi-tool)")


if __name__ == "__main__":
    main()
