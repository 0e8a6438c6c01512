"""Build ``data/styles/marketplace/``: an API-marketplace catalog (RapidAPI-like) and its requests.

The registry models what a large public API marketplace looks like once every subscribed
endpoint is turned into a tool: the tool name is the endpoint's operation, ``_for_`` and the
provider's slug (``get_current_weather_for_skycast``, ``search_hotels_for_booking_com_v2``);
descriptions are what such listings carry: sometimes a one-line summary, often the provider's
blurb repeated on every endpoint, a boilerplate line ("This endpoint returns data.") or just the
operation name again; many providers compete with near-identical endpoints (five weather
providers with current/forecast, five sports-data providers, several currency, finance,
translation, news, jobs, recipe, movie and travel providers).

Labels: ``expected`` lists tools that are all required. When an operation (a *capability*
below) is offered by more than one provider, the request names the provider (one of its
``aliases``), as users of a marketplace subscription do ("check it on SkyCast"); when only one
provider offers it, the request need not. ``check()`` enforces this rule on every request.

Splits: ``assign_splits`` of ``toolsel.datasets`` (alternate dev/test within each category, in
file order), reimplemented below so the script runs without the package.

Deterministic (no randomness, no network): run from the repository root with
``python data/styles/marketplace/build.py``; the output is byte-identical on every run.
"""

from __future__ import annotations

import json
import zlib
from pathlib import Path

HERE = Path(__file__).resolve().parent

# ---------------------------------------------------------------------------------------------
# Parameters: "name*:type:description" joined by "|" (* = required; type defaults to string,
# an empty description is left out, as many listings do).
# ---------------------------------------------------------------------------------------------

# capability -> (one-line summary as a listing would word it, parameter spec)
CAPS: dict[str, tuple[str, str]] = {
    # weather
    "weather.current": ("Current weather for a location", "q*::City name or lat,lon|units::metric or imperial|lang"),
    "weather.daily": ("Daily forecast", "q*::Location|days:integer:1-16"),
    "weather.hourly": ("Hourly forecast for the next 48 hours", "lat*:number|lon*:number|hours:integer"),
    "weather.alerts": ("Severe weather alerts", "region*::ISO country or state code"),
    "weather.history": ("Historical weather", "q*|date*::YYYY-MM-DD"),
    "weather.air": ("Air quality index", "lat*:number|lon*:number"),
    "weather.astro": ("Sunrise, sunset and moon phase", "q*|dt::date"),
    "weather.marine": ("Marine and surf forecast", "lat*:number|lon*:number|days:integer"),
    "weather.uv": ("UV index", "lat*:number|lon*:number"),
    "weather.pollen": ("Pollen forecast", "q*"),
    # sports
    "sports.live": ("Live scores", "sport::football, basketball...|league_id:integer"),
    "sports.fixtures": ("Fixtures", "team_id:integer|league_id:integer|season:integer|next:integer"),
    "sports.standings": ("League table", "league_id*:integer|season*:integer"),
    "sports.player": ("Player statistics", "player_id*:integer|season:integer"),
    "sports.player_search": ("Search players", "name*"),
    "sports.team_search": ("Search teams", "name*|country"),
    "sports.squad": ("Team squad", "team_id*:integer"),
    "sports.h2h": ("Head to head", "team1*:integer|team2*:integer|last:integer"),
    "sports.odds": ("Pre-match odds", "fixture_id*:integer|bookmaker"),
    "sports.topscorers": ("Top scorers", "league_id*:integer|season*:integer"),
    "sports.injuries": ("Injuries", "team_id:integer|league_id:integer"),
    "sports.leagues": ("Leagues", "country|sport"),
    "sports.transfers": ("Transfers", "player_id:integer|team_id:integer"),
    "sports.boxscore": ("Game box score", "game_id*:integer"),
    "sports.f1_results": ("Race results", "season*:integer|round:integer"),
    "sports.f1_drivers": ("Driver standings", "season*:integer"),
    "sports.cricket_score": ("Match scorecard", "match_id*:integer"),
    "sports.cricket_series": ("Series list", "type::international, league"),
    # currency / finance / crypto
    "fx.convert": ("Convert currency", "from*::ISO 4217 code|to*::ISO 4217 code|amount:number"),
    "fx.latest": ("Latest rates", "base::ISO 4217 code|symbols"),
    "fx.history": ("Historical rates", "date*::YYYY-MM-DD|base|symbols"),
    "fx.timeseries": ("Time series", "start_date*|end_date*|base|symbols"),
    "fx.list": ("List of supported currencies", ""),
    "stock.quote": ("Real-time quote", "symbol*::Ticker, e.g. AAPL"),
    "stock.history": ("Historical prices", "symbol*|interval::1d, 1wk, 1mo|range"),
    "stock.profile": ("Company profile", "symbol*"),
    "stock.earnings": ("Earnings calendar", "from|to|symbol"),
    "stock.dividends": ("Dividend history", "symbol*"),
    "stock.news": ("News for a ticker", "symbol*|limit:integer"),
    "stock.search": ("Symbol search", "query*"),
    "stock.financials": ("Income statement, balance sheet, cash flow", "symbol*|period::annual or quarter"),
    "stock.movers": ("Top gainers and losers", "market"),
    "stock.options": ("Options chain", "symbol*|expiration"),
    "stock.insider": ("Insider transactions", "symbol*"),
    "crypto.price": ("Coin price", "coin*::Coin id or symbol|vs_currency"),
    "crypto.markets": ("Coins by market cap", "vs_currency|per_page:integer"),
    "crypto.history": ("Coin price history", "coin*|days:integer"),
    "crypto.exchanges": ("Exchanges", "limit:integer"),
    "crypto.gas": ("Ethereum gas price", ""),
    "crypto.wallet": ("Wallet balance", "address*|chain"),
    # translation
    "tr.translate": ("Translate text", "text*|target*::Target language code|source::Source language code"),
    "tr.detect": ("Detect language", "text*"),
    "tr.languages": ("Supported languages", ""),
    "tr.batch": ("Translate a list of texts", "texts*:array|target*"),
    "tr.transliterate": ("Transliterate text", "text*|from_script|to_script"),
    "tr.document": ("Translate a document", "file_url*|target*"),
    # news
    "news.top": ("Top headlines", "country|category"),
    "news.search": ("Search articles", "q*|from|to|language|sort_by"),
    "news.category": ("News by category", "category*|country"),
    "news.sources": ("News sources", "language|country"),
    "news.crypto": ("Latest crypto news", "coin|limit:integer"),
    "news.tech": ("Tech news", "topic::ai, startups, gadgets|limit:integer"),
    "news.summarize": ("Article summary", "url*"),
    # jobs
    "jobs.search": ("Search jobs", "query*::Job title and location|page:integer|remote_only:boolean|date_posted"),
    "jobs.details": ("Job details", "job_id*"),
    "jobs.salary": ("Estimated salary", "job_title*|location*|radius:integer"),
    "jobs.company": ("Jobs at a company", "company*"),
    "jobs.remote": ("Remote jobs", "category|limit:integer"),
    "jobs.company_reviews": ("Company reviews", "company*"),
    # recipes / food
    "food.search": ("Search recipes", "query*|diet|cuisine|max_ready_time:integer"),
    "food.recipe": ("Recipe information", "id*:integer"),
    "food.random": ("Random recipes", "tags|number:integer"),
    "food.by_ingredients": ("Find recipes by ingredients", "ingredients*::comma separated|number:integer"),
    "food.nutrition": ("Nutrition analysis", "ingr*::Ingredient lines, e.g. 1 cup rice"),
    "food.mealplan": ("Generate meal plan", "time_frame::day or week|target_calories:integer|diet"),
    "food.cocktail": ("Search cocktails by name", "s*"),
    "food.cocktail_ingredient": ("Filter cocktails by ingredient", "i*"),
    "food.wine_pairing": ("Wine pairing", "food*"),
    "food.substitute": ("Ingredient substitutes", "ingredient*"),
    "food.restaurants": ("Restaurants near a location", "lat*:number|lon*:number|cuisine"),
    # movies / tv
    "movie.search": ("Search movies", "query*|year:integer"),
    "movie.details": ("Movie details", "movie_id*"),
    "movie.cast": ("Cast and crew", "movie_id*"),
    "movie.trending": ("Trending titles", "time_window::day or week|type"),
    "movie.upcoming": ("Upcoming releases", "region"),
    "movie.where": ("Where to watch", "title*|country*"),
    "movie.reviews": ("Critic reviews", "movie_id*"),
    "movie.boxoffice": ("Box office", "weekend"),
    "tv.search": ("Search shows", "q*"),
    "tv.episodes": ("Episode list", "show_id*:integer|season:integer"),
    "tv.schedule": ("TV schedule", "country|date"),
    "movie.similar": ("Similar titles", "movie_id*"),
    "movie.actor": ("Actor filmography", "name*"),
    # travel
    "hotel.search": ("Search hotels", "dest*::City or area|checkin*::YYYY-MM-DD|checkout*::YYYY-MM-DD|adults:integer|rooms:integer|currency"),
    "hotel.details": ("Hotel details", "hotel_id*"),
    "hotel.reviews": ("Hotel reviews", "hotel_id*|language"),
    "hotel.photos": ("Hotel photos", "hotel_id*"),
    "hotel.locations": ("Search locations", "name*"),
    "rental.search": ("Search vacation rentals", "location*|checkin*|checkout*|guests:integer"),
    "flight.search": ("Search flights", "origin*::IATA|destination*::IATA|date*|return_date|adults:integer|cabin_class"),
    "flight.cheapest": ("Cheapest dates", "origin*|destination*|month"),
    "flight.status": ("Flight status", "flight_number*|date"),
    "flight.airport": ("Airport info", "iata*"),
    "flight.delays": ("Airport delays", "iata*"),
    "flight.airlines": ("Airlines", "country"),
    "travel.attractions": ("Attractions", "location_id*|lang"),
    "travel.restaurants": ("Restaurants", "location_id*|lang|limit:integer"),
    "travel.location": ("Location search", "query*"),
    "car.search": ("Search rental cars", "pickup_location*|pickup_date*|dropoff_date*|driver_age:integer"),
    "travel.visa": ("Visa requirements", "passport*::ISO country code|destination*::ISO country code"),
    "travel.trains": ("Train connections", "from*|to*|date*"),
    # geo
    "geo.geocode": ("Forward geocoding", "address*"),
    "geo.reverse": ("Reverse geocoding", "lat*:number|lon*:number"),
    "geo.ip": ("IP lookup", "ip*"),
    "geo.timezone": ("Time zone", "lat*:number|lon*:number"),
    "geo.distance": ("Distance between two points", "from*|to*|unit::km or mi"),
    "geo.route": ("Driving directions", "origin*|destination*|mode"),
    "geo.places": ("Places nearby", "lat*:number|lon*:number|type|radius:integer"),
    "geo.countries": ("Country info", "code*"),
    "geo.postal": ("Postal code lookup", "postal_code*|country"),
    # comms / validation
    "email.validate": ("Validate email", "email*"),
    "email.disposable": ("Disposable email check", "domain*"),
    "email.finder": ("Find email address", "first_name*|last_name*|domain*"),
    "sms.send": ("Send SMS", "to*|message*|sender"),
    "sms.status": ("SMS delivery status", "message_id*"),
    "phone.validate": ("Validate phone number", "number*|country"),
    "phone.carrier": ("Carrier lookup", "number*"),
    # utilities
    "util.qr": ("Generate QR code", "data*|size:integer|format"),
    "util.barcode_gen": ("Generate barcode", "data*|type"),
    "util.shorten": ("Shorten URL", "url*|alias"),
    "util.expand": ("Expand short URL", "short_url*"),
    "util.link_stats": ("Link click statistics", "short_url*"),
    "pdf.merge": ("Merge PDFs", "files*:array"),
    "pdf.to_text": ("Extract text from PDF", "file_url*"),
    "pdf.from_html": ("HTML to PDF", "html*"),
    "pdf.compress": ("Compress PDF", "file_url*"),
    "img.remove_bg": ("Remove background", "image_url*"),
    "img.upscale": ("Upscale image", "image_url*|scale:integer"),
    "img.resize": ("Resize image", "image_url*|width:integer|height:integer"),
    "img.ocr": ("OCR", "image_url*|language"),
    "img.nsfw": ("NSFW detection", "image_url*"),
    "img.faces": ("Face detection", "image_url*"),
    "text.sentiment": ("Sentiment analysis", "text*"),
    "text.keywords": ("Keyword extraction", "text*"),
    "text.summarize": ("Summarize text", "text*|sentences:integer"),
    "text.grammar": ("Grammar check", "text*|language"),
    "text.paraphrase": ("Paraphrase", "text*"),
    "text.ai_detect": ("AI content detection", "text*"),
    "web.screenshot": ("Website screenshot", "url*|full_page:boolean"),
    "web.whois": ("Whois lookup", "domain*"),
    "web.dns": ("DNS records", "domain*|type"),
    "web.status": ("Website uptime check", "url*"),
    "web.ssl": ("SSL certificate info", "domain*"),
    "web.tech": ("Detect website technologies", "url*"),
    # music
    "music.search": ("Search tracks", "q*|type::track, artist, album"),
    "music.artist": ("Artist overview", "artist_id*"),
    "music.top_tracks": ("Artist top tracks", "artist_id*"),
    "music.charts": ("Charts", "country|chart"),
    "music.lyrics": ("Song lyrics", "artist*|title*"),
    "music.recognize": ("Recognize song from audio", "audio_url*"),
    "music.album": ("Album tracks", "album_id*"),
    "music.playlist": ("Playlist tracks", "playlist_id*"),
    "music.concerts": ("Upcoming concerts", "artist*|city"),
    # shopping
    "shop.search": ("Search products", "query*|country|sort_by|min_price:number|max_price:number"),
    "shop.product": ("Product details", "product_id*"),
    "shop.reviews": ("Product reviews", "product_id*|page:integer"),
    "shop.offers": ("Product offers", "product_id*"),
    "shop.price_history": ("Price history", "product_id*"),
    "shop.barcode": ("Barcode lookup", "barcode*::UPC or EAN"),
    "shop.deals": ("Deals", "category"),
    # real estate
    "realty.search_sale": ("Properties for sale", "location*|min_price:integer|max_price:integer|beds_min:integer"),
    "realty.search_rent": ("Properties for rent", "location*|max_rent:integer|beds_min:integer"),
    "realty.details": ("Property details", "property_id*"),
    "realty.valuation": ("Property valuation estimate", "address*"),
    "realty.mortgage": ("Mortgage calculator", "price*:number|down_payment:number|rate*:number|term_years:integer"),
    "realty.agents": ("Find agents", "location*"),
    "realty.schools": ("Nearby schools", "lat*:number|lon*:number"),
    # social
    "social.user_tweets": ("User posts", "username*|limit:integer"),
    "social.search_posts": ("Search posts", "query*|section::top or latest"),
    "social.user_info": ("User info", "username*"),
    "social.followers": ("Followers", "username*|count:integer"),
    "social.trending": ("Trending topics", "woeid:integer"),
    "social.ig_profile": ("Profile info", "username*"),
    "social.ig_posts": ("User posts", "username*"),
    "social.ig_stories": ("Stories", "username*"),
    "social.tt_video": ("Video info without watermark", "url*"),
    "social.tt_user_videos": ("User videos", "unique_id*"),
    "social.tt_trending": ("Trending hashtags", "region"),
    "social.reddit_top": ("Top posts of a subreddit", "subreddit*|time::day, week, month"),
    "social.reddit_comments": ("Post comments", "post_id*"),
    "social.reddit_search": ("Search Reddit", "query*"),
    # calendar
    "cal.holidays": ("Public holidays", "country*|year*:integer"),
    "cal.is_holiday": ("Is today a public holiday", "country*"),
    "cal.workdays": ("Working days between two dates", "start*|end*|country*"),
    "cal.add_workdays": ("Add working days to a date", "start*|days*:integer|country*"),
    # health / fitness
    "fit.exercises_muscle": ("Exercises by target muscle", "target*"),
    "fit.exercises_equipment": ("Exercises by equipment", "equipment*"),
    "fit.exercise_detail": ("Exercise details", "id*"),
    "fit.calories_burned": ("Calories burned", "activity*|weight:number|duration:integer"),
    "fit.food_calories": ("Calories in food", "query*"),
    "fit.bmi": ("BMI", "weight*:number|height*:number"),
    "drug.info": ("Drug label info", "name*"),
    "drug.interactions": ("Drug interactions", "drugs*:array"),
    "drug.side_effects": ("Side effects", "name*"),
    # words
    "word.define": ("Definition", "word*"),
    "word.synonyms": ("Synonyms", "word*"),
    "word.antonyms": ("Antonyms", "word*"),
    "word.rhymes": ("Rhymes", "word*"),
    "word.slang": ("Slang definition", "term*"),
    "word.random": ("Random word", ""),
    "word.pronounce": ("Pronunciation audio", "word*"),
    # vehicles
    "car.vin": ("Decode VIN", "vin*"),
    "car.specs": ("Model specifications", "make*|model*|year:integer"),
    "car.makes": ("List makes", "year:integer"),
    "car.recalls": ("Recalls", "make*|model*|year*:integer"),
    "car.fuel": ("Fuel economy", "make*|model*|year*:integer"),
    "car.plate": ("License plate lookup", "plate*|state*"),
    # fun
    "fun.joke": ("Random joke", "category"),
    "fun.joke_search": ("Search jokes", "query*"),
    "fun.quote": ("Quote of the day", "category"),
    "fun.quote_author": ("Quotes by author", "author*"),
    "fun.trivia": ("Trivia questions", "amount:integer|category|difficulty"),
    "fun.horoscope": ("Daily horoscope", "sign*|day"),
}

# provider slug -> (display aliases, blurb, [(capability, operation name), ...])
P = list[tuple[str, str]]
PROVIDERS: list[tuple[str, list[str], str, P]] = [
    # --- weather: five providers, all with current + daily forecast ---
    ("skycast", ["SkyCast"], "SkyCast provides accurate weather data for any location in the world.",
     [("weather.current", "get_current_weather"), ("weather.daily", "get_forecast"),
      ("weather.hourly", "get_hourly_forecast"), ("weather.marine", "marine_weather"),
      ("weather.astro", "astronomy"), ("weather.history", "history_weather")]),
    ("weatherly_v2", ["Weatherly"], "Weatherly API: simple and fast weather API. Free plan available.",
     [("weather.current", "current_weather_data"), ("weather.daily", "daily_forecast_16_days"),
      ("weather.hourly", "hourly_forecast_48_hours"), ("weather.alerts", "severe_weather_alerts"),
      ("weather.uv", "uv_index")]),
    ("meteohub", ["MeteoHub"], "MeteoHub - global weather forecasts and observations from 40,000 stations.",
     [("weather.current", "realtime_weather_api"), ("weather.daily", "forecast_weather_api"),
      ("weather.air", "air_quality"), ("weather.pollen", "pollen_forecast"),
      ("weather.history", "historical_data"), ("weather.astro", "sun_and_moon")]),
    ("climadata", ["ClimaData"], "Weather and climate data API for developers.",
     [("weather.current", "current"), ("weather.daily", "forecast"), ("weather.history", "point_history"),
      ("weather.alerts", "alerts")]),
    ("forecast_lab", ["Forecast Lab"], "Forecast Lab: hyperlocal forecasts powered by machine learning.",
     [("weather.current", "weather_now"), ("weather.daily", "get_5_day_forecast"),
      ("weather.hourly", "minutely_and_hourly")]),
    # --- sports: five data providers plus two niche ones ---
    ("sportsapi", ["SportsAPI"], "SportsAPI covers 40+ sports and 1000+ leagues with live scores, stats and fixtures.",
     [("sports.live", "get_live_events"), ("sports.fixtures", "get_team_fixtures"),
      ("sports.standings", "get_league_standings"), ("sports.player", "get_player_stats"),
      ("sports.player_search", "search_player"), ("sports.team_search", "search_team"),
      ("sports.leagues", "get_leagues"), ("sports.odds", "get_event_odds")]),
    ("api_football_v3", ["API-Football", "API Football"], "API-Football: football data for 960+ leagues and cups. Livescore, standings, events, line-ups, players, statistics, odds.",
     [("sports.live", "fixtures_live"), ("sports.fixtures", "fixtures"), ("sports.standings", "standings"),
      ("sports.player", "players_statistics"), ("sports.player_search", "players_search"),
      ("sports.squad", "players_squads"), ("sports.h2h", "fixtures_head_to_head"),
      ("sports.topscorers", "players_topscorers"), ("sports.injuries", "injuries"),
      ("sports.transfers", "transfers"), ("sports.odds", "odds"), ("sports.leagues", "leagues"),
      ("sports.team_search", "teams")]),
    ("livescore_hub", ["LiveScore Hub"], "LiveScore Hub - the fastest live scores for football, tennis, basketball and hockey.",
     [("sports.live", "matches_list_live"), ("sports.fixtures", "matches_list_by_date"),
      ("sports.standings", "leagues_get_table"), ("sports.team_search", "search"),
      ("sports.squad", "teams_get_squad")]),
    ("hoopstats", ["HoopStats"], "HoopStats: basketball statistics (NBA, WNBA, EuroLeague).",
     [("sports.live", "games_today"), ("sports.player", "player_season_averages"),
      ("sports.boxscore", "game_box_score"), ("sports.standings", "standings"),
      ("sports.player_search", "players"), ("sports.injuries", "injury_report")]),
    ("playmaker_data", ["Playmaker Data", "Playmaker"], "Playmaker Data is a sports data API for developers.",
     [("sports.live", "livescores"), ("sports.fixtures", "schedule"), ("sports.standings", "table"),
      ("sports.player", "player_profile_stats"), ("sports.odds", "odds_pre_match"),
      ("sports.topscorers", "top_scorers")]),
    ("formula_one_data", ["Formula One Data", "F1 data"], "Formula One Data - results since 1950.",
     [("sports.f1_results", "race_results"), ("sports.f1_drivers", "driver_standings")]),
    ("cricket_live", ["Cricket Live"], "Cricket Live API",
     [("sports.cricket_score", "match_scorecard"), ("sports.cricket_series", "series_list"),
      ("sports.live", "live_matches")]),
    # --- currency ---
    ("currency_exchange", ["Currency Exchange"], "Live currency and foreign exchange rates by specifying source and destination quotes and optionally amount to calculate.",
     [("fx.convert", "exchange"), ("fx.list", "listquotes")]),
    ("fxratesapi", ["FXRates", "FX Rates API"], "FXRates API provides real-time and historical exchange rates for 170 currencies.",
     [("fx.convert", "convert"), ("fx.latest", "latest"), ("fx.history", "historical"),
      ("fx.timeseries", "timeseries"), ("fx.list", "symbols")]),
    ("exchangerate_v6", ["ExchangeRate", "ExchangeRate API"], "Free currency conversion API.",
     [("fx.convert", "pair_conversion"), ("fx.latest", "latest_rates"), ("fx.history", "historical_data"),
      ("fx.list", "supported_codes")]),
    # --- stocks / finance ---
    ("marketpulse", ["MarketPulse"], "MarketPulse: real-time stock market data, quotes, charts and news.",
     [("stock.quote", "market_get_quotes"), ("stock.history", "stock_get_chart"),
      ("stock.profile", "stock_get_profile"), ("stock.news", "news_list_by_symbol"),
      ("stock.movers", "market_get_movers"), ("stock.search", "auto_complete"),
      ("stock.financials", "stock_get_financials"), ("stock.options", "stock_get_options")]),
    ("stockdata_io", ["StockData"], "StockData.io - financial data API for stocks, ETFs and indices.",
     [("stock.quote", "quote"), ("stock.history", "time_series"), ("stock.profile", "company_overview"),
      ("stock.earnings", "earnings_calendar"), ("stock.dividends", "dividends"),
      ("stock.search", "symbol_search"), ("stock.insider", "insider_transactions")]),
    ("quotefeed", ["Quotefeed"], "Quotefeed provides stock quotes.",
     [("stock.quote", "get_price"), ("stock.history", "get_eod_prices"), ("stock.dividends", "get_dividends")]),
    # --- crypto ---
    ("coinstats_hub", ["CoinStats Hub", "CoinStats"], "CoinStats Hub: prices, market caps and history for 10,000+ cryptocurrencies.",
     [("crypto.price", "get_coin"), ("crypto.markets", "get_coins"), ("crypto.history", "get_coin_price_history"),
      ("crypto.exchanges", "get_exchanges")]),
    ("crypto_tracker", ["CryptoTracker", "Crypto Tracker"], "Cryptocurrency tracker API",
     [("crypto.price", "simple_price"), ("crypto.markets", "coins_markets"),
      ("crypto.gas", "eth_gas_oracle"), ("crypto.wallet", "wallet_balance")]),
    # --- translation ---
    ("translo", ["Translo"], "Translo: fast and cheap translation API, 100+ languages.",
     [("tr.translate", "translate"), ("tr.detect", "detect"), ("tr.languages", "languages")]),
    ("deep_translate_v2", ["DeepTranslate", "Deep Translate"], "DeepTranslate - neural machine translation API.",
     [("tr.translate", "translate_text"), ("tr.detect", "detect_language"), ("tr.batch", "translate_batch"),
      ("tr.languages", "get_languages"), ("tr.document", "translate_document")]),
    ("text_translator", ["Text Translator"], "Translate text to 100+ languages.",
     [("tr.translate", "translate"), ("tr.languages", "getlanguages")]),
    ("lingua_api", ["LinguaAPI", "Lingua API"], "LinguaAPI provides language tools.",
     [("tr.translate", "translate_post"), ("tr.transliterate", "transliterate"), ("tr.detect", "language_detection")]),
    # --- news ---
    ("newsnow", ["NewsNow"], "NewsNow aggregates news from 50,000 sources worldwide.",
     [("news.top", "top_headlines"), ("news.search", "search_news"), ("news.category", "get_news_by_category"),
      ("news.sources", "sources")]),
    ("world_news_api", ["World News API"], "World News API: search and filter news from all over the world.",
     [("news.search", "search_news"), ("news.top", "top_news"), ("news.summarize", "extract_and_summarize"),
      ("news.sources", "search_news_sources")]),
    ("headlines_hub", ["Headlines Hub"], "Get the latest headlines.",
     [("news.top", "latest"), ("news.category", "topic_headlines"), ("news.search", "search")]),
    ("crypto_news_feed", ["Crypto News Feed"], "Latest news from the top crypto news sites.",
     [("news.crypto", "get_all_crypto_news"), ("news.search", "get_news_from_source")]),
    ("tech_news_digest", ["Tech News Digest"], "Tech news from top publications.",
     [("news.tech", "get_tech_news"), ("news.top", "get_top_stories")]),
    # --- jobs ---
    ("jsearch", ["JSearch"], "JSearch: fast and reliable job search on Google for Jobs, LinkedIn, Indeed and more.",
     [("jobs.search", "search"), ("jobs.details", "job_details"), ("jobs.salary", "estimated_salary"),
      ("jobs.company", "search_filters")]),
    ("jobs_api_v2", ["Jobs API"], "Jobs API - a job board aggregator.",
     [("jobs.search", "list_jobs"), ("jobs.details", "get_job"), ("jobs.company", "jobs_by_company")]),
    ("remote_jobs_board", ["Remote Jobs Board"], "Remote jobs from startups.",
     [("jobs.remote", "remote_jobs"), ("jobs.search", "search_remote_jobs")]),
    ("careerfeed", ["CareerFeed"], "CareerFeed provides job and company data.",
     [("jobs.search", "job_search"), ("jobs.company_reviews", "company_reviews"), ("jobs.details", "job_detail")]),
    # --- recipes / food ---
    ("tasty_recipes", ["Tasty Recipes", "Tasty"], "Tasty Recipes: thousands of recipes with videos.",
     [("food.search", "recipes_list"), ("food.recipe", "recipes_get_more_info"), ("food.random", "recipes_list_similarities")]),
    ("recipe_finder", ["Recipe Finder"], "Recipe Finder API: search 2 million recipes.",
     [("food.search", "search_recipes"), ("food.recipe", "get_recipe_information"),
      ("food.by_ingredients", "search_recipes_by_ingredients"), ("food.random", "get_random_recipes"),
      ("food.wine_pairing", "wine_pairing"), ("food.substitute", "get_ingredient_substitutes"),
      ("food.mealplan", "generate_meal_plan")]),
    ("nutri_facts", ["NutriFacts"], "NutriFacts: nutrition data for any food.",
     [("food.nutrition", "nutrition_data"), ("fit.food_calories", "food_database_parser")]),
    ("cocktail_db", ["CocktailDB", "Cocktail DB"], "An open database of drinks and cocktails.",
     [("food.cocktail", "search_by_name"), ("food.cocktail_ingredient", "filter_by_ingredient"),
      ("food.random", "random_cocktail")]),
    ("mealplanner_pro", ["MealPlanner Pro"], "MealPlanner Pro API",
     [("food.mealplan", "create_plan"), ("food.search", "recipes"), ("food.nutrition", "analyze_recipe")]),
    # --- movies / tv ---
    ("moviesdb", ["MoviesDB"], "MoviesDB: data on 800,000 movies and TV shows.",
     [("movie.search", "search_movie"), ("movie.details", "movie_details"), ("movie.cast", "movie_credits"),
      ("movie.trending", "trending"), ("movie.upcoming", "upcoming_movies"), ("movie.similar", "similar_movies"),
      ("tv.search", "search_tv"), ("tv.episodes", "tv_season_details")]),
    ("filmfacts", ["FilmFacts"], "FilmFacts - movie ratings, plot, cast.",
     [("movie.search", "title_find"), ("movie.details", "title_get_overview"), ("movie.cast", "title_get_full_credits"),
      ("movie.boxoffice", "title_get_box_office"), ("movie.actor", "actors_get_all_filmography")]),
    ("streaming_availability", ["Streaming Availability"], "Find where movies and series are streaming in 60 countries.",
     [("movie.where", "search_title"), ("movie.upcoming", "changes")]),
    ("movie_reviews_hub", ["Movie Reviews Hub"], "Critic reviews.",
     [("movie.reviews", "get_reviews"), ("movie.search", "search")]),
    ("showtracker", ["ShowTracker"], "ShowTracker: TV show and episode data.",
     [("tv.search", "search_shows"), ("tv.episodes", "show_episodes"), ("tv.schedule", "schedule")]),
    # --- travel ---
    ("booking_com_v2", ["Booking.com", "Booking"], "Booking.com API: hotels, apartments and rentals data.",
     [("hotel.search", "search_hotels"), ("hotel.details", "hotel_data"), ("hotel.reviews", "hotel_reviews"),
      ("hotel.photos", "hotel_photos"), ("hotel.locations", "locations_auto_complete"),
      ("car.search", "car_rental_search"), ("flight.search", "search_flights")]),
    ("hotels_finder", ["Hotels Finder"], "Hotels Finder provides hotel data.",
     [("hotel.search", "properties_list"), ("hotel.details", "properties_get_details"),
      ("hotel.reviews", "reviews_list"), ("hotel.locations", "locations_search")]),
    ("staysearch", ["StaySearch"], "StaySearch: vacation rental listings.",
     [("rental.search", "search_property"), ("hotel.details", "property_details"), ("hotel.reviews", "property_reviews")]),
    ("flightfinder", ["FlightFinder"], "FlightFinder: search flights from 700 airlines.",
     [("flight.search", "search_one_way_and_round_trip"), ("flight.cheapest", "cheapest_dates"),
      ("flight.airport", "search_airport")]),
    ("skyroutes_v3", ["SkyRoutes"], "SkyRoutes flight data API",
     [("flight.search", "flights_search"), ("flight.cheapest", "price_calendar"), ("car.search", "cars_search")]),
    ("flight_tracker_live", ["Flight Tracker Live", "Flight Tracker"], "Real-time flight tracking.",
     [("flight.status", "flight_info"), ("flight.delays", "airport_delays"), ("flight.airport", "airport_info"),
      ("flight.airlines", "airlines")]),
    ("travel_advisor", ["Travel Advisor"], "Travel Advisor: attractions, restaurants, hotels and reviews for destinations.",
     [("travel.location", "locations_search"), ("travel.attractions", "attractions_list"),
      ("travel.restaurants", "restaurants_list"), ("hotel.search", "hotels_list")]),
    ("car_rental_hub", ["Car Rental Hub"], "Car Rental Hub",
     [("car.search", "search_cars")]),
    ("travel_docs", ["Travel Docs"], "Passport and visa information.",
     [("travel.visa", "visa_requirements")]),
    ("rail_connect", ["Rail Connect"], "European train timetables.",
     [("travel.trains", "journeys")]),
    # --- geo ---
    ("geocoder_pro", ["Geocoder Pro"], "Geocoder Pro: address to coordinates and back.",
     [("geo.geocode", "geocode"), ("geo.reverse", "reverse_geocode"), ("geo.postal", "postal_code_search")]),
    ("ip_geolocation", ["IP Geolocation"], "IP geolocation API.",
     [("geo.ip", "ip_lookup"), ("geo.timezone", "ip_timezone")]),
    ("timezone_db", ["TimeZoneDB"], "Time zone database.",
     [("geo.timezone", "get_time_zone")]),
    ("distance_calculator", ["Distance Calculator"], "Calculate the distance between two locations.",
     [("geo.distance", "distance"), ("geo.route", "driving_route")]),
    ("places_nearby", ["Places Nearby"], "Find points of interest around a location.",
     [("geo.places", "nearby_places"), ("food.restaurants", "nearby_restaurants")]),
    ("rest_countries", ["REST Countries"], "Information about countries.",
     [("geo.countries", "country_by_code")]),
    # --- comms / validation ---
    ("email_validator", ["Email Validator"], "Validate email addresses.",
     [("email.validate", "validate_email"), ("email.disposable", "check_disposable")]),
    ("mailcheck_pro", ["MailCheck Pro"], "MailCheck Pro - email verification and finder.",
     [("email.validate", "verify"), ("email.finder", "email_finder")]),
    ("sms_gateway", ["SMS Gateway"], "Send SMS worldwide.",
     [("sms.send", "send_sms"), ("sms.status", "message_status")]),
    ("phone_validator", ["Phone Validator"], "Phone number validation.",
     [("phone.validate", "validate"), ("phone.carrier", "carrier_lookup")]),
    # --- utilities ---
    ("qr_code_generator", ["QR Code Generator"], "QR code generator API.",
     [("util.qr", "generate_qr"), ("util.barcode_gen", "generate_barcode")]),
    ("url_shortener", ["URL Shortener"], "Shorten long URLs.",
     [("util.shorten", "shorten"), ("util.expand", "expand"), ("util.link_stats", "link_stats")]),
    ("pdf_tools", ["PDF Tools"], "PDF Tools API.",
     [("pdf.merge", "merge"), ("pdf.to_text", "pdf_to_text"), ("pdf.from_html", "html_to_pdf"), ("pdf.compress", "compress")]),
    ("image_toolkit", ["Image Toolkit"], "Image processing API.",
     [("img.remove_bg", "remove_background"), ("img.upscale", "upscale"), ("img.resize", "resize"),
      ("img.nsfw", "nsfw_detect"), ("img.faces", "face_detection")]),
    ("ocr_space_lite", ["OCR Space"], "OCR API.",
     [("img.ocr", "parse_image")]),
    ("text_analysis", ["Text Analysis"], "Text Analysis API: NLP for everyone.",
     [("text.sentiment", "sentiment"), ("text.keywords", "keywords"), ("text.summarize", "summarize"),
      ("text.ai_detect", "ai_detection")]),
    ("writing_assistant", ["Writing Assistant"], "Writing Assistant API.",
     [("text.grammar", "grammar_check"), ("text.paraphrase", "rewrite"), ("text.summarize", "summary")]),
    ("website_screenshot", ["Website Screenshot"], "Take screenshots of websites.",
     [("web.screenshot", "screenshot")]),
    ("domain_tools", ["Domain Tools"], "Domain and website tools.",
     [("web.whois", "whois"), ("web.dns", "dns_lookup"), ("web.ssl", "ssl_check"), ("web.status", "is_it_down"),
      ("web.tech", "tech_stack")]),
    # --- music ---
    ("musicmeta", ["MusicMeta"], "MusicMeta: tracks, albums, artists and playlists.",
     [("music.search", "search"), ("music.artist", "artist_overview"), ("music.top_tracks", "artist_top_tracks"),
      ("music.album", "album_tracks"), ("music.playlist", "playlist_tracks"), ("music.charts", "charts")]),
    ("lyrics_finder", ["Lyrics Finder"], "Find lyrics for any song.",
     [("music.lyrics", "get_lyrics"), ("music.search", "search_songs")]),
    ("songrecog", ["SongRecog"], "Identify songs from audio.",
     [("music.recognize", "recognize"), ("music.charts", "charts_track")]),
    ("concert_finder", ["Concert Finder"], "Upcoming concerts and events.",
     [("music.concerts", "artist_events")]),
    # --- shopping ---
    ("product_search_v2", ["Product Search"], "Product Search: search products across stores.",
     [("shop.search", "search"), ("shop.product", "product_details"), ("shop.reviews", "product_reviews"),
      ("shop.offers", "product_offers")]),
    ("price_tracker", ["Price Tracker"], "Track prices of online products.",
     [("shop.price_history", "price_history"), ("shop.deals", "deals"), ("shop.product", "product")]),
    ("barcode_lookup", ["Barcode Lookup"], "Barcode database.",
     [("shop.barcode", "lookup")]),
    # --- real estate ---
    ("realty_listings", ["Realty Listings"], "Realty Listings: homes for sale and rent.",
     [("realty.search_sale", "properties_list_for_sale"), ("realty.search_rent", "properties_list_for_rent"),
      ("realty.details", "properties_detail"), ("realty.agents", "agents_list"), ("realty.schools", "schools_list_nearby"),
      ("realty.mortgage", "mortgage_calculate")]),
    ("homevalue", ["HomeValue"], "HomeValue: property data.",
     [("realty.valuation", "zestimate"), ("realty.details", "property"), ("realty.search_sale", "search_by_location")]),
    # --- social ---
    ("socialscraper", ["SocialScraper"], "Scrape posts and profiles.",
     [("social.user_tweets", "user_tweets"), ("social.search_posts", "search"), ("social.user_info", "user_details"),
      ("social.followers", "followers"), ("social.trending", "trends")]),
    ("insta_profile", ["InstaProfile"], "Profile and posts data.",
     [("social.ig_profile", "profile"), ("social.ig_posts", "user_posts"), ("social.ig_stories", "stories")]),
    ("tiktok_data", ["TikTok Data"], "TikTok data API.",
     [("social.tt_video", "video_no_watermark"), ("social.tt_user_videos", "user_videos"),
      ("social.tt_trending", "trending_hashtags")]),
    ("reddit_posts", ["Reddit Posts"], "Reddit data.",
     [("social.reddit_top", "top_posts_by_subreddit"), ("social.reddit_comments", "post_comments"),
      ("social.reddit_search", "search_posts")]),
    # --- calendar ---
    ("public_holidays", ["Public Holidays"], "Public holidays for 100+ countries.",
     [("cal.holidays", "public_holidays"), ("cal.is_holiday", "is_today_public_holiday")]),
    ("working_days", ["Working Days"], "Working days calculations.",
     [("cal.workdays", "count_working_days"), ("cal.add_workdays", "add_working_days"), ("cal.holidays", "list_non_working_days")]),
    # --- health / fitness ---
    ("exercisedb", ["ExerciseDB"], "ExerciseDB: 1300+ exercises with animated demos.",
     [("fit.exercises_muscle", "list_by_target_muscle"), ("fit.exercises_equipment", "list_by_equipment"),
      ("fit.exercise_detail", "exercise_by_id")]),
    ("fitness_calculator", ["Fitness Calculator"], "Fitness calculations.",
     [("fit.bmi", "bmi"), ("fit.calories_burned", "burned_calorie_from_activity"), ("fit.food_calories", "food_info")]),
    ("drug_info", ["Drug Info"], "Drug information database.",
     [("drug.info", "drug_label"), ("drug.interactions", "interactions"), ("drug.side_effects", "adverse_events")]),
    # --- words ---
    ("word_dictionary", ["Word Dictionary"], "English dictionary API.",
     [("word.define", "definition"), ("word.synonyms", "synonyms"), ("word.antonyms", "antonyms"),
      ("word.pronounce", "pronunciation"), ("word.random", "random_word")]),
    ("urban_slang", ["Urban Slang"], "Slang dictionary.",
     [("word.slang", "define"), ("word.random", "random")]),
    ("word_tools", ["Word Tools"], "Word tools API.",
     [("word.rhymes", "rhymes"), ("word.synonyms", "words_like"), ("word.define", "lookup")]),
    # --- vehicles ---
    ("vin_decoder", ["VIN Decoder"], "Decode vehicle identification numbers.",
     [("car.vin", "decode_vin"), ("car.plate", "plate_to_vin")]),
    ("car_specs", ["Car Specs"], "Car specifications database.",
     [("car.specs", "trims"), ("car.makes", "makes"), ("car.fuel", "fuel_economy"), ("car.recalls", "recalls")]),
    # --- fun ---
    ("jokes_api", ["Jokes API"], "Jokes API",
     [("fun.joke", "random_joke"), ("fun.joke_search", "search_jokes")]),
    ("quotes_daily", ["Quotes Daily"], "Famous quotes.",
     [("fun.quote", "quote_of_the_day"), ("fun.quote_author", "quotes_by_author")]),
    ("trivia_master", ["Trivia Master"], "Trivia questions API.",
     [("fun.trivia", "questions")]),
    ("horoscope_api", ["Horoscope API"], "Daily horoscope.",
     [("fun.horoscope", "get_horoscope")]),
]

# Extra endpoints of the large providers that listings carry beyond the common operations:
# version/health/status endpoints, account endpoints and list-of-enum helpers. Every real
# catalog has many of these; no request needs them.
EXTRA_OPS = ["get_status", "api_version", "list_endpoints", "account_usage"]
EXTRA_FOR = {"skycast", "weatherly_v2", "meteohub", "sportsapi", "api_football_v3", "fxratesapi",
             "marketpulse", "stockdata_io", "coinstats_hub", "deep_translate_v2", "newsnow",
             "jsearch", "recipe_finder", "moviesdb", "booking_com_v2", "hotels_finder",
             "flightfinder", "travel_advisor", "musicmeta", "product_search_v2", "realty_listings",
             "socialscraper", "image_toolkit", "text_analysis", "domain_tools"}
EXTRA_SUMMARY = {"get_status": "API status", "api_version": "Returns the API version",
                 "list_endpoints": "List all endpoints", "account_usage": "Usage of your API key"}

BOILERPLATE = ["This endpoint returns data.", "Use this API to get results", "GET request",
               "Returns JSON", "endpoint", "This endpoint will return back all information.",
               "Get data", "Use this endpoint to get the results you need."]


def params(spec: str) -> dict:
    props: dict = {}
    required: list[str] = []
    for item in filter(None, spec.split("|")):
        parts = item.split(":", 2) + ["", ""]
        name, kind, desc = parts[0], parts[1] or "string", parts[2]
        if name.endswith("*"):
            name = name[:-1]
            required.append(name)
        prop: dict = {"type": kind}
        if kind == "array":
            prop["items"] = {"type": "string"}
        if desc:
            prop["description"] = desc
        props[name] = prop
    schema: dict = {"type": "object", "properties": props}
    if required:
        schema["required"] = required
    return schema


def humanize(op: str) -> str:
    return " ".join(w.capitalize() for w in op.split("_"))


def describe(name: str, op: str, summary: str, blurb: str) -> str:
    """The listing's description: which kind is fixed by a hash of the name (no randomness)."""
    k = zlib.crc32(name.encode()) % 10
    if k <= 2:
        return summary
    if k <= 4:
        return blurb
    if k <= 6:
        return BOILERPLATE[zlib.crc32(op.encode()) % len(BOILERPLATE)]
    if k == 7:
        return humanize(op)
    if k == 8:
        return f"{summary}. {blurb}"
    return f'This is the subfunction for tool "{humanize(name.rsplit("_for_", 1)[1])}", you can use this tool.'


def build_registry() -> tuple[list[dict], dict[str, str], dict[str, list[str]]]:
    """The tools, each tool's capability, and each provider slug's aliases."""
    tools: list[dict] = []
    cap_of: dict[str, str] = {}
    aliases: dict[str, list[str]] = {}
    for slug, als, blurb, ops in PROVIDERS:
        aliases[slug] = als
        for cap, op in ops:
            summary, spec = CAPS[cap]
            name = f"{op}_for_{slug}"
            tools.append({"name": name, "description": describe(name, op, summary, blurb),
                          "domain": slug, "parameters": params(spec)})
            cap_of[name] = cap
        if slug in EXTRA_FOR:
            for op in EXTRA_OPS:
                name = f"{op}_for_{slug}"
                tools.append({"name": name, "description": describe(name, op, EXTRA_SUMMARY[op], blurb),
                              "domain": slug, "parameters": params("")})
                cap_of[name] = f"meta.{op}"
    names = [t["name"] for t in tools]
    assert len(names) == len(set(names)), "duplicate tool names"
    assert all(len(n) <= 64 for n in names)
    return tools, cap_of, aliases


# ---------------------------------------------------------------------------------------------
# Requests, hand-written. (category, text, expected tools). Categories: single (one tool),
# multi_within (several tools of one provider or one kind of API), multi_cross (several kinds).
# ---------------------------------------------------------------------------------------------

REQUESTS: list[tuple[str, str, list[str]]] = [
    # ---- single ----
    ("single", "Quick one: is it raining in Manchester right now? Check SkyCast please.",
     ["get_current_weather_for_skycast"]),
    ("single", "I'm taking the kids to the beach near Biarritz on Saturday and my husband wants to surf. How big are the waves going to be? Coordinates are roughly 43.48, -1.56.",
     ["marine_weather_for_skycast"]),
    ("single", "My asthma has been bad this week. Can you tell me how clean the air is around 52.52, 13.40 today?",
     ["air_quality_for_meteohub"]),
    ("single", "Hey! Using Weatherly, what's the outlook for the next ten days in Denver? We're trying to decide which weekend to drive up to the mountains.",
     ["daily_forecast_16_days_for_weatherly_v2"]),
    ("single", "Are there any storm or flood warnings out for Florida at the moment? Use the Weatherly feed, that's the one our ops team trusts.",
     ["severe_weather_alerts_for_weatherly_v2"]),
    ("single", "Hay fever is killing me. What's the pollen situation in Vienna going to be like the next few days?",
     ["pollen_forecast_for_meteohub"]),
    ("single", "Can you pull up how Erling Haaland has done this season, goals, assists, minutes, from API-Football?",
     ["players_statistics_for_api_football_v3"]),
    ("single", "Who's won more often when Arsenal play Tottenham, looking at their last ten meetings?",
     ["fixtures_head_to_head_for_api_football_v3"]),
    ("single", "I missed last night's Celtics game. Can you get me the full box score with everyone's points and rebounds?",
     ["game_box_score_for_hoopstats"]),
    ("single", "Who won each Grand Prix in the 1998 season? I'm settling an argument with my dad.",
     ["race_results_for_formula_one_data"]),
    ("single", "My friend swears India collapsed in the second innings of yesterday's test. Can you show me the scorecard for match 88213?",
     ["match_scorecard_for_cricket_live"]),
    ("single", "How much is 1,200 Swiss francs in US dollars at today's rate? Use FXRates.",
     ["convert_for_fxratesapi"]),
    ("single", "For my tax return I need the euro to pound rate as it was on 31 March 2023. Pull it from ExchangeRate API please.",
     ["historical_data_for_exchangerate_v6"]),
    ("single", "What's Nvidia trading at right now according to MarketPulse?",
     ["market_get_quotes_for_marketpulse"]),
    ("single", "Which of my holdings report earnings next week? I hold MSFT, KO and JPM. Check the StockData calendar.",
     ["earnings_calendar_for_stockdata_io"]),
    ("single", "Are company insiders at Tesla buying or dumping shares lately?",
     ["insider_transactions_for_stockdata_io"]),
    ("single", "How expensive is it to send an ETH transaction right now? I don't want to overpay on fees.",
     ["eth_gas_oracle_for_crypto_tracker"]),
    ("single", "What's in this wallet 0x3f5CE5FBFe3E9af3971dD833D26bA9b5C936f0bE on Ethereum? Just the balance.",
     ["wallet_balance_for_crypto_tracker"]),
    ("single", "Can you put this email to my landlord into polite German using DeepTranslate? 'The heating has been broken since Monday, please send someone this week.'",
     ["translate_text_for_deep_translate_v2"]),
    ("single", "I have the name of a Russian supplier, Щербаков, and need it written in Latin letters for a bank form.",
     ["transliterate_for_lingua_api"]),
    ("single", "Got a customer message and no idea what language it's in: 'Dziękuję za szybką dostawę'. Run it through Translo's detector?",
     ["detect_for_translo"]),
    ("single", "We have our whole user manual as a PDF at https://files.example.com/manual.pdf and need it in Japanese. Can DeepTranslate do the whole file?",
     ["translate_document_for_deep_translate_v2"]),
    ("single", "What are people saying about the ECB rate decision? Find me recent articles on NewsNow.",
     ["search_news_for_newsnow"]),
    ("single", "Is there anything going on with Solana today? Just the crypto news, not price charts.",
     ["get_all_crypto_news_for_crypto_news_feed"]),
    ("single", "This article is way too long, can you give me the gist? https://news.example.org/2024/energy-grid-report",
     ["extract_and_summarize_for_world_news_api"]),
    ("single", "What does a senior data engineer typically make in Austin? I'm about to negotiate an offer.",
     ["estimated_salary_for_jsearch"]),
    ("single", "Before I accept the interview, what do employees actually say about working at Northwind Logistics?",
     ["company_reviews_for_careerfeed"]),
    ("single", "I only want to work from home. Show me what remote design roles the Remote Jobs Board has this week.",
     ["remote_jobs_for_remote_jobs_board"]),
    ("single", "I've got chicken thighs, a lemon, some garlic and half a bag of spinach. Any dinner ideas from that?",
     ["search_recipes_by_ingredients_for_recipe_finder"]),
    ("single", "I'm out of buttermilk for pancakes, what can I use instead?",
     ["get_ingredient_substitutes_for_recipe_finder"]),
    ("single", "How do you make a proper negroni? Look it up in CocktailDB.",
     ["search_by_name_for_cocktail_db"]),
    ("single", "Is Oppenheimer streaming anywhere in Canada, or do I have to rent it?",
     ["search_title_for_streaming_availability"]),
    ("single", "I'm trying to remember everything Frances McDormand has been in. Can FilmFacts list her films?",
     ["actors_get_all_filmography_for_filmfacts"]),
    ("single", "How much money did Barbie make at the box office? FilmFacts should have it.",
     ["title_get_box_office_for_filmfacts"]),
    ("single", "My flight LH 1234 today, is it on time?",
     ["flight_info_for_flight_tracker_live"]),
    ("single", "Do I, with a Brazilian passport, need a visa to go to Japan for two weeks?",
     ["visa_requirements_for_travel_docs"]),
    ("single", "Find me a morning train from Munich to Zurich on the 14th.",
     ["journeys_for_rail_connect"]),
    ("single", "I'm at 40.7580, -73.9855. What's around me, like pharmacies or a coffee place within a few hundred meters?",
     ["nearby_places_for_places_nearby"]),
    ("single", "We got a signup from someone with the address kate@quickmail.top. Is that one of those throwaway email domains?",
     ["check_disposable_for_email_validator"]),
    ("single", "Text my contractor at +44 7700 900123 that I'll be 20 minutes late, via the SMS Gateway.",
     ["send_sms_for_sms_gateway"]),
    ("single", "Which mobile network is +1 415 555 0199 on? I need to know before I port it.",
     ["carrier_lookup_for_phone_validator"]),
    ("single", "My scanned contract is a PDF at https://docs.example.com/contract.pdf. I just need the text out of it so I can search it.",
     ["pdf_to_text_for_pdf_tools"]),
    ("single", "Could you take a screenshot of our landing page https://acme.example.com, the whole page, so I can send it to the designer?",
     ["screenshot_for_website_screenshot"]),
    ("single", "When does the SSL cert on shop.example.net run out? I keep forgetting to renew it.",
     ["ssl_check_for_domain_tools"]),
    ("single", "There's a song playing in this clip and it's driving me crazy: https://cdn.example.com/clip.m4a. What is it?",
     ["recognize_for_songrecog"]),
    ("single", "Is Hozier playing anywhere near Dublin in the next few months?",
     ["artist_events_for_concert_finder"]),
    ("single", "I found this cereal box in the pantry, barcode 0016000275287. What product is it exactly?",
     ["lookup_for_barcode_lookup"]),
    ("single", "Has the price of product B09X7FXHVJ actually dropped recently or is the 'sale' fake?",
     ["price_history_for_price_tracker"]),
    ("single", "Roughly what is 14 Elm Street, Springfield worth these days? Just curious, we bought it in 2015.",
     ["zestimate_for_homevalue"]),
    ("single", "What's trending on TikTok in Germany right now, hashtag-wise? Our social team wants ideas.",
     ["trending_hashtags_for_tiktok_data"]),
    ("single", "Show me the top posts on r/personalfinance from this week.",
     ["top_posts_by_subreddit_for_reddit_posts"]),
    ("single", "How many business days are there between 3 March and 28 April in the Netherlands? Need it for a contract deadline.",
     ["count_working_days_for_working_days"]),
    ("single", "Can I take ibuprofen together with my lisinopril, or is that a bad combination?",
     ["interactions_for_drug_info"]),
    ("single", "My knees hate squats. What other exercises work the quads?",
     ["list_by_target_muscle_for_exercisedb"]),
    ("single", "I bought a used car and want to know what it really is. The VIN is 1HGCM82633A004352.",
     ["decode_vin_for_vin_decoder"]),
    ("single", "Has the 2019 Ford Escape had any safety recalls? I'm thinking of buying one.",
     ["recalls_for_car_specs"]),
    ("single", "My teenager keeps saying something is 'mid'. What does that even mean?",
     ["define_for_urban_slang"]),
    ("single", "I'm writing a birthday poem and need words that rhyme with 'garden'.",
     ["rhymes_for_word_tools"]),
    ("single", "Give me ten hard history trivia questions for pub night on Thursday.",
     ["questions_for_trivia_master"]),
    # ---- multi_within ----
    ("multi_within", "Heading to Edinburgh for a conference. On SkyCast, what's it like there right now and what does the rest of the week look like? I'm trying to decide whether to pack the big coat.",
     ["get_current_weather_for_skycast", "get_forecast_for_skycast"]),
    ("multi_within", "We're doing a sunrise hike near Zermatt on Thursday. Can you check on SkyCast exactly when the sun comes up there and how the weather looks hour by hour that morning? Coordinates are 46.02, 7.75.",
     ["astronomy_for_skycast", "get_hourly_forecast_for_skycast"]),
    ("multi_within", "Premier League question for API-Football: show me the current table, and who's leading the golden boot race this season?",
     ["standings_for_api_football_v3", "players_topscorers_for_api_football_v3"]),
    ("multi_within", "We have a fantasy draft tonight. From API-Football, who's currently injured at Liverpool, and what does their full squad look like?",
     ["injuries_for_api_football_v3", "players_squads_for_api_football_v3"]),
    ("multi_within", "NBA night! Using HoopStats, what games are on today, and how has Jokic been averaging this season?",
     ["games_today_for_hoopstats", "player_season_averages_for_hoopstats"]),
    ("multi_within", "I'm looking at Apple as a long-term buy. Through StockData, can you give me a quick overview of the company and their dividend history over the years?",
     ["company_overview_for_stockdata_io", "dividends_for_stockdata_io"]),
    ("multi_within", "Before the market opens, show me on MarketPulse the biggest gainers and losers and the latest news on AMD. I'm thinking about a trade.",
     ["market_get_movers_for_marketpulse", "news_list_by_symbol_for_marketpulse"]),
    ("multi_within", "My nephew keeps bugging me about Bitcoin. Through CoinStats, what's it worth now and how has it moved over the last 90 days?",
     ["get_coin_for_coinstats_hub", "get_coin_price_history_for_coinstats_hub"]),
    ("multi_within", "We got a bunch of support tickets in some language I don't recognize. Can DeepTranslate figure out which language they are and then translate all twelve of them into English in one go?",
     ["detect_language_for_deep_translate_v2", "translate_batch_for_deep_translate_v2"]),
    ("multi_within", "Job hunting again, sigh. On JSearch, find me product manager openings in Toronto posted this week, and show me the full posting for the first one.",
     ["search_for_jsearch", "job_details_for_jsearch"]),
    ("multi_within", "I want to eat better next week. Could Recipe Finder put together a vegetarian meal plan around 1,800 calories a day, and suggest a wine for the mushroom risotto night?",
     ["generate_meal_plan_for_recipe_finder", "wine_pairing_for_recipe_finder"]),
    ("multi_within", "Movie night with friends. On MoviesDB, what's trending this week, and for Dune Part Two specifically, who's in the cast?",
     ["trending_for_moviesdb", "movie_credits_for_moviesdb"]),
    ("multi_within", "Catching up on The Bear on ShowTracker. Can you find the show and list the episodes of season 2? Also what's on TV tonight in the US?",
     ["search_shows_for_showtracker", "show_episodes_for_showtracker", "schedule_for_showtracker"]),
    ("multi_within", "Booking.com please: we need a hotel in Porto from June 3 to June 6 for two adults, and for the top result show me the reviews and some photos so I can see the rooms.",
     ["search_hotels_for_booking_com_v2", "hotel_reviews_for_booking_com_v2", "hotel_photos_for_booking_com_v2"]),
    ("multi_within", "Our family is flexible on dates. Using FlightFinder, when is it cheapest to fly Boston to Dublin in October, and then search round trips for that week?",
     ["cheapest_dates_for_flightfinder", "search_one_way_and_round_trip_for_flightfinder"]),
    ("multi_within", "We land in Rome on Friday. What are the must-see sights and some good trattorias near the Pantheon according to Travel Advisor? You'll probably need to look up the location first.",
     ["locations_search_for_travel_advisor", "attractions_list_for_travel_advisor", "restaurants_list_for_travel_advisor"]),
    ("multi_within", "I'm checking a domain we might buy, bluefinch.io. Who owns it and what DNS records does it have right now?",
     ["whois_for_domain_tools", "dns_lookup_for_domain_tools"]),
    ("multi_within", "Product photos for the shop: take https://img.example.com/mug.jpg, knock out the background and then make it bigger, it looks blurry on retina screens.",
     ["remove_background_for_image_toolkit", "upscale_for_image_toolkit"]),
    ("multi_within", "Here's a batch of 300 app store reviews. Tell me whether people are mostly happy and what topics keep coming up. Use Text Analysis.",
     ["sentiment_for_text_analysis", "keywords_for_text_analysis"]),
    ("multi_within", "I'm into Phoebe Bridgers lately. On MusicMeta, give me an overview of her and her most popular songs.",
     ["artist_overview_for_musicmeta", "artist_top_tracks_for_musicmeta"]),
    ("multi_within", "We're house hunting in Raleigh. On Realty Listings, show three-bed homes under 450k, and what schools are near the first one? Also roughly what would the mortgage be with 10% down at 6.8%?",
     ["properties_list_for_sale_for_realty_listings", "schools_list_nearby_for_realty_listings", "mortgage_calculate_for_realty_listings"]),
    ("multi_within", "Can you check Product Search for noise cancelling headphones under $200, and for the best one show me what buyers say and which stores have it cheapest?",
     ["search_for_product_search_v2", "product_reviews_for_product_search_v2", "product_offers_for_product_search_v2"]),
    ("multi_within", "We're looking at a 2021 Toyota RAV4 Hybrid. What's the real fuel economy and the trim specs? Car Specs should have both.",
     ["fuel_economy_for_car_specs", "trims_for_car_specs"]),
    ("multi_within", "I'm starting a new medication, metformin. What is it exactly and what side effects should I watch for?",
     ["drug_label_for_drug_info", "adverse_events_for_drug_info"]),
    ("multi_within", "I'm 82 kg and 1.78 m. What's my BMI, and how many calories would I burn doing 45 minutes of cycling? Use the Fitness Calculator.",
     ["bmi_for_fitness_calculator", "burned_calorie_from_activity_for_fitness_calculator"]),
    ("multi_within", "I need a definition of 'ephemeral' for my essay, plus a couple of synonyms and an opposite word. Use Word Dictionary.",
     ["definition_for_word_dictionary", "synonyms_for_word_dictionary", "antonyms_for_word_dictionary"]),
    ("multi_within", "We're planning a go-live in Germany. Which public holidays fall in 2025 there, and what date is 15 working days after 1 December?",
     ["public_holidays_for_public_holidays", "add_working_days_for_working_days"]),
    ("multi_within", "Check who @nasa is on SocialScraper: their profile details and their last 20 posts.",
     ["user_details_for_socialscraper", "user_tweets_for_socialscraper"]),
    ("multi_within", "Our marketing intern shortened a bunch of links. Where does bit.example/x7Q actually go, and how many clicks has it had?",
     ["expand_for_url_shortener", "link_stats_for_url_shortener"]),
    # ---- multi_cross ----
    ("multi_cross", "Hey, planning a trip to Lisbon next month with my partner. Could you check what the weather will be like on Forecast Lab, find us a couple of hotel options near the old town on Booking.com, and convert 500 dollars to euros on FXRates so I know my budget? Thanks!",
     ["get_5_day_forecast_for_forecast_lab", "search_hotels_for_booking_com_v2", "convert_for_fxratesapi"]),
    ("multi_cross", "Flying to Tokyo on the 12th. Search flights from SFO on SkyRoutes, and do I need a visa with a US passport? Also how many yen will 1,000 dollars get me, ExchangeRate please.",
     ["flights_search_for_skyroutes_v3", "visa_requirements_for_travel_docs", "pair_conversion_for_exchangerate_v6"]),
    ("multi_cross", "I'm going to a Champions League game in Madrid. Show me Real Madrid's next fixtures on API-Football and what the weather will be that week on MeteoHub.",
     ["fixtures_for_api_football_v3", "forecast_weather_api_for_meteohub"]),
    ("multi_cross", "Write a quick message to my Italian host that we'll arrive late, translate it with Translo, and text it to +39 333 123 4567 through the SMS Gateway.",
     ["translate_for_translo", "send_sms_for_sms_gateway"]),
    ("multi_cross", "I'm prepping for a job interview at Shopify. On Jobs API, list their open roles, and find recent news about the company on World News API so I sound informed.",
     ["jobs_by_company_for_jobs_api_v2", "search_news_for_world_news_api"]),
    ("multi_cross", "Date night in. Find a good Thai green curry recipe on Tasty, pull the full recipe, and what's a fun cocktail with lime from CocktailDB?",
     ["recipes_list_for_tasty_recipes", "recipes_get_more_info_for_tasty_recipes", "filter_by_ingredient_for_cocktail_db"]),
    ("multi_cross", "We want to watch Past Lives tonight. Where can we stream it in the UK, and what did critics think of it? Movie Reviews Hub has the reviews.",
     ["search_title_for_streaming_availability", "get_reviews_for_movie_reviews_hub"]),
    ("multi_cross", "I'm meeting a client at 350 Fifth Avenue, New York. Get me the coordinates with Geocoder Pro, then what time zone is that in on TimeZoneDB? I'm calling in from Sydney.",
     ["geocode_for_geocoder_pro", "get_time_zone_for_timezone_db"]),
    ("multi_cross", "A signup came in from mark.jones@corp-mail.example with phone +1 202 555 0147. Is the email real according to MailCheck Pro, and is the phone number valid?",
     ["verify_for_mailcheck_pro", "validate_for_phone_validator"]),
    ("multi_cross", "Make a QR code pointing to our event page https://events.example.com/spring-gala, but shorten the link first so the code isn't too dense.",
     ["shorten_for_url_shortener", "generate_qr_for_qr_code_generator"]),
    ("multi_cross", "Is our store site https://shop.example.com down for everyone, and can you grab a screenshot of what it currently shows?",
     ["is_it_down_for_domain_tools", "screenshot_for_website_screenshot"]),
    ("multi_cross", "We're road-tripping from Lyon to Marseille on Saturday. How far is it and how long is the drive? Check ClimaData for the forecast in Marseille too.",
     ["driving_route_for_distance_calculator", "forecast_for_climadata"]),
    ("multi_cross", "I want to move to Lisbon for a remote job. Look up remote backend jobs on the Remote Jobs Board, and what's the going salary for a backend developer in Lisbon?",
     ["search_remote_jobs_for_remote_jobs_board", "estimated_salary_for_jsearch"]),
    ("multi_cross", "Our Berlin office trip: StaySearch apartments for 6 people from May 10 to 14, a rental car from Car Rental Hub at BER for those days, and any public holidays in Germany that week that might close things.",
     ["search_property_for_staysearch", "search_cars_for_car_rental_hub", "public_holidays_for_public_holidays"]),
    ("multi_cross", "I'm making a smoothie with 1 banana, 200 g Greek yogurt and a cup of blueberries. What's the nutrition on that via NutriFacts, and what leg exercises can I do with just dumbbells afterwards?",
     ["nutrition_data_for_nutri_facts", "list_by_equipment_for_exercisedb"]),
    ("multi_cross", "Someone sent me a TikTok link https://www.tiktok.com/@chef/video/7312 and I want the video without the watermark, then the song in it identified. The audio is at https://cdn.example.com/tt7312.m4a.",
     ["video_no_watermark_for_tiktok_data", "recognize_for_songrecog"]),
    ("multi_cross", "Check my ETH wallet 0x9a1B...77 balance, and what's ETH worth in euros on CryptoTracker right now? I want to know what my stash is worth.",
     ["wallet_balance_for_crypto_tracker", "simple_price_for_crypto_tracker"]),
    ("multi_cross", "Our Friday quiz needs a theme: give me a random joke from Jokes API to open with, and a quote of the day from Quotes Daily for the end slide.",
     ["random_joke_for_jokes_api", "quote_of_the_day_for_quotes_daily"]),
    ("multi_cross", "What are the top headlines in France today on Headlines Hub, and translate the first three into English with Text Translator.",
     ["latest_for_headlines_hub", "translate_for_text_translator"]),
    ("multi_cross", "Flight BA 283 is bringing my mum in tonight. Is it delayed, and if so, is LAX generally backed up this evening? And what's the weather doing in LA right now? Weatherly is fine for that.",
     ["flight_info_for_flight_tracker_live", "airport_delays_for_flight_tracker_live", "current_weather_data_for_weatherly_v2"]),
    ("multi_cross", "I'm comparing Apple and Microsoft stock. MarketPulse for AAPL's price chart over the last year, and StockData for Microsoft's latest quote.",
     ["stock_get_chart_for_marketpulse", "quote_for_stockdata_io"]),
    ("multi_cross", "Proofread my cover letter for grammar with the Writing Assistant, then check with Text Analysis whether it reads like it was written by an AI. I don't want it flagged.",
     ["grammar_check_for_writing_assistant", "ai_detection_for_text_analysis"]),
    ("multi_cross", "Our nurse app needs this: the patient is on warfarin and just got prescribed amoxicillin. Any interaction? And send a text to +1 617 555 0102 with the answer via SMS Gateway.",
     ["interactions_for_drug_info", "send_sms_for_sms_gateway"]),
    ("multi_cross", "There's a receipt photo at https://img.example.com/receipt.jpg. Read the text off it with OCR Space and then translate it from Korean to English with Translo.",
     ["parse_image_for_ocr_space_lite", "translate_for_translo"]),
    ("multi_cross", "What's the weather now in Cape Town on ClimaData, and is there any cricket on at the moment? Cricket Live will know.",
     ["current_for_climadata", "live_matches_for_cricket_live"]),
    ("multi_cross", "I'm buying a used 2017 Honda Civic, plate 7ABC123 in California. Get the VIN from the plate, decode it, and check for recalls on that model year.",
     ["plate_to_vin_for_vin_decoder", "decode_vin_for_vin_decoder", "recalls_for_car_specs"]),
]


def check(requests, cap_of: dict[str, str], aliases: dict[str, list[str]]) -> None:
    """Every expected tool exists; a capability offered by several providers is named."""
    providers_of: dict[str, set[str]] = {}
    for name, cap in cap_of.items():
        providers_of.setdefault(cap, set()).add(name.rsplit("_for_", 1)[1])
    for i, (_, text, expected) in enumerate(requests, 1):
        assert len(set(expected)) == len(expected), (i, expected)
        for name in expected:
            assert name in cap_of, f"request {i}: unknown tool {name}"
            slug = name.rsplit("_for_", 1)[1]
            if len(providers_of[cap_of[name]]) > 1:
                low = text.lower()
                assert any(a.lower() in low for a in aliases[slug]), \
                    f"request {i}: {name} has equivalents; the text must name {aliases[slug]}"


def assign_splits(categories: list[str]) -> list[str]:
    """toolsel.datasets.assign_splits: alternate dev/test within each category."""
    seen: dict[str, int] = {}
    out = []
    for cat in categories:
        i = seen.get(cat, 0)
        seen[cat] = i + 1
        out.append("dev" if i % 2 == 0 else "test")
    return out


def build_queries(requests) -> list[dict]:
    splits = assign_splits([c for c, _, _ in requests])
    out = []
    for i, ((cat, text, expected), split) in enumerate(zip(requests, splits), 1):
        rec = {"id": f"mkt-{i:03d}", "query": text, "expected": expected, "split": split,
               "category": cat}
        if len(expected) > 1:
            rec["tags"] = ["multi"]
        out.append(rec)
    return out


def main() -> None:
    tools, cap_of, aliases = build_registry()
    check(REQUESTS, cap_of, aliases)
    queries = build_queries(REQUESTS)
    (HERE / "registry.json").write_text(
        "[\n" + ",\n".join(json.dumps(t, ensure_ascii=False) for t in tools) + "\n]\n", encoding="utf-8")
    (HERE / "queries.jsonl").write_text(
        "".join(json.dumps(q, ensure_ascii=False) + "\n" for q in queries), encoding="utf-8")
    multi = sum(len(q["expected"]) > 1 for q in queries)
    print(f"wrote {HERE / 'registry.json'} ({len(tools)} tools) and {HERE / 'queries.jsonl'} "
          f"({len(queries)} requests, {multi} multi-tool)")


if __name__ == "__main__":
    main()
